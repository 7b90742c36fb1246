"""Run-time enforcement: re-check each budget transition before its settle row is committed.

``Accountant(enforce="generated")`` (the default) checks every transition with the rules
generated from ``Odp/LedgerCore.lean``; ``enforce="lean"`` sends each transition to the
compiled Lean checker ``odpcheck`` (a long-lived process, :mod:`odp.certs.lean`); ``None``
turns the re-check off.  A transition is the Alg. 1 state (ε_r, δ_r) just before the round and
the round's (sup ε, charged ε, δ) with its declared class costs and realised class; the check
passes when the Lemma 4 row passes ``blocksOk``, the ``mech`` row (when the caller passes the
round's recorded ``mechanism`` and ``params``, from which :mod:`odp.certs.mechanisms` derives it)
passes ``mechOk``, the charge passes ``refundJustified``, ``admits`` accepts the step, and
``update`` gives exactly ``(ε_r − charged, δ_r − δ)``.  On a disagreement the ledger charges the
round its sup and raises :class:`~odp.errors.CertificateError`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable

from .. import _lean_rules as lean
from ..errors import CertificateError, InvalidParameter
from . import mechanisms
from .format import to_units
from .transition import transition_text

__all__ = ["Check", "generated_check", "transition_check", "transition_text"]

Check = Callable[[Fraction, Fraction, Fraction, Fraction, Fraction, "list[Fraction] | None",
                  "int | None"], bool]


def generated_check(eps_r: Fraction, delta_r: Fraction, sup: Fraction, charged: Fraction,
                    delta: Fraction, blocks: list[Fraction] | None = None,
                    realized: int | None = None, *, mechanism: str | None = None,
                    params: dict[str, Any] | None = None) -> bool:
    """The transition passes the generated step check (``odp._lean_rules.check_step``:
    ``blocksOk``, ``mechOk``, ``refundJustified``, ``admits``) and ``update`` gives exactly
    ``(ε_r − charged, δ_r − δ)``.  ``mechanism``/``params``: the round's recorded name and
    parameters; for one of odp's built-in mechanisms (:func:`odp.certs.mechanisms.derive`) its
    ``mech`` row is checked too (a user's own mechanism is declared: nothing to check)."""
    mech = None if mechanism is None else mechanisms.derive(mechanism, params)
    amounts = mech.amounts() if mech is not None else []
    n = len(blocks or ())
    try:  # a negative amount is no natural number of units: such a transition is refused
        d, scaled = to_units((eps_r, delta_r, sup, charged, delta, *(blocks or ()), *amounts))
    except CertificateError:
        return False
    e_r, d_r, s, c, dl = scaled[:5]
    after, _ = lean.check_step(lean.State(e_r, d_r), lean.Entry(s, c, dl),
                               blocks=scaled[5:5 + n] if blocks is not None else None,
                               realized=realized,
                               mech=None if mech is None else mechanisms.lean_args(mech.row(d)))
    return after is not None and after.eps == e_r - c and after.delta == d_r - dl


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
