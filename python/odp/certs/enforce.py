"""Run-time enforcement: re-check each budget transition before its settle row is committed.

``Accountant(enforce="generated")`` (the default) checks every transition with the rules
generated from ``Odp/LedgerCore.lean``; ``enforce="lean"`` sends each transition to the
compiled Lean checker ``odpcheck`` (a long-lived process, :mod:`odp.certs.lean`); ``None``
turns the re-check off.  A transition is the Alg. 1 state (ε_r, δ_r) just before the round and
the round's (sup ε, charged ε, δ) with its declared class costs and realised class; the check
passes when the Lemma 4 row passes ``blocksOk``, the charge passes ``refundJustified``,
``admits`` accepts the step, and ``update`` gives exactly ``(ε_r − charged, δ_r − δ)``.  On a disagreement the ledger charges the round
its sup and raises :class:`~odp.errors.CertificateError`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable

from .. import _lean_rules as lean
from .format import to_units
from ..errors import CertificateError, InvalidParameter

Check = Callable[[Fraction, Fraction, Fraction, Fraction, Fraction], bool]


def _scale(*values: Fraction) -> tuple[int, list[int]]:
    """(D, [v·D]) in the certificate's units of 1/D (non-negative values)."""
    return to_units(values)


def transition_text(eps_r: Fraction, delta_r: Fraction, sup: Fraction, charged: Fraction,
                    delta: Fraction, blocks: list[Fraction] | None = None,
                    realized: int | None = None) -> tuple[str, int, tuple[int, int]]:
    """A one-step certificate text for a transition (with its ``blocks`` row when a class is
    realised), its D, and the expected final state."""
    d, scaled = _scale(eps_r, delta_r, sup, charged, delta, *(blocks or []))
    e_r, d_r, s, c, dl = scaled[:5]
    text = f"D {d}\nbudget {e_r} {d_r}\nstep {s} {c} {dl}\n"
    if blocks is not None:
        text += "blocks " + " ".join(map(str, scaled[5:])) + f" ; realized {realized}\n"
    expected = (e_r - c, d_r - dl)
    return text, d, expected


def generated_check(eps_r: Fraction, delta_r: Fraction, sup: Fraction, charged: Fraction,
                    delta: Fraction, blocks: list[Fraction] | None = None,
                    realized: int | None = None) -> bool:
    """The transition agrees with ``Odp.LedgerCore.blocksOk``, ``refundJustified``, ``admits``
    and ``update`` (generated)."""
    try:  # a negative amount is no natural number of units: such a transition is refused
        d, scaled = _scale(eps_r, delta_r, sup, charged, delta, *(blocks or ()))
    except CertificateError:
        return False
    e_r, d_r, s, c, dl = scaled[:5]
    state, entry = lean.State(e_r, d_r), lean.Entry(s, c, dl)
    if blocks is not None and not (realized is not None and lean.blocksOk(entry, scaled[5:], realized)):
        return False
    if not lean.refundJustified(entry, blocks is not None) or not lean.admits(state, entry):
        return False
    after = lean.update(state, entry)
    return (after.eps, after.delta) == (e_r - c, d_r - dl)


def transition_check(mode: str | None) -> Check | None:
    """The check for ``Accountant(enforce=mode)``."""
    if mode is None or mode == "off":
        return None
    if mode == "generated":
        return generated_check
    if mode == "lean":
        from .lean import LeanTransitionCheck

        return LeanTransitionCheck()
    raise InvalidParameter(f"enforce must be 'generated', 'lean' or None, got {mode!r}")
