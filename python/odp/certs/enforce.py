"""Run-time enforcement: re-check each budget transition before its settle row is committed.

``Accountant(enforce="generated")`` (the default) checks every transition with the rules
generated from ``Odp/LedgerCore.lean``; ``enforce="lean"`` sends each transition to the
compiled Lean checker ``odpcheck`` (a long-lived process, :mod:`odp.certs.lean`); ``None``
turns the re-check off.  A transition is the Alg. 1 state (ε_r, δ_r) just before the round and
the round's (sup ε, charged ε, δ); the check passes when ``admits`` accepts it and ``update``
gives exactly ``(ε_r − charged, δ_r − δ)``.  On a disagreement the ledger charges the round
its sup and raises :class:`~odp.errors.CertificateError`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable

from .. import _lean_rules as lean
from ..errors import InvalidParameter

Check = Callable[[Fraction, Fraction, Fraction, Fraction, Fraction], bool]


def _scale(*values: Fraction) -> tuple[int, list[int]]:
    """(D, [v·D]) with D the lcm of the denominators: every v·D is an integer."""
    d = math.lcm(*(v.denominator for v in values))
    return d, [v.numerator * (d // v.denominator) for v in values]


def transition_text(eps_r: Fraction, delta_r: Fraction, sup: Fraction, charged: Fraction,
                    delta: Fraction) -> tuple[str, int, tuple[int, int]]:
    """A one-step certificate text for a transition, its D, and the expected final state."""
    d, (e_r, d_r, s, c, dl) = _scale(eps_r, delta_r, sup, charged, delta)
    text = f"D {d}\nbudget {e_r} {d_r}\nstep {s} {c} {dl}\n"
    expected = (e_r - c, d_r - dl)
    return text, d, expected


def generated_check(eps_r: Fraction, delta_r: Fraction, sup: Fraction, charged: Fraction,
                    delta: Fraction) -> bool:
    """The transition agrees with ``Odp.LedgerCore.admits`` and ``update`` (generated)."""
    if min(eps_r, delta_r, sup, charged, delta) < 0:
        return False
    d, (e_r, d_r, s, c, dl) = _scale(eps_r, delta_r, sup, charged, delta)
    state, entry = lean.State(e_r, d_r), lean.Entry(s, c, dl)
    if not lean.admits(state, entry):
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
