"""Helpers for releases made of several accountant rounds (:func:`odp.mechanisms.svt.
sparse_vector_release`, :func:`odp.mechanisms.ptr.iqr_then_median`).

Such a helper

1. validates every parameter and builds every mechanism of every stage *before* its first
   round, so a mistake costs nothing;
2. checks that its whole plan fits the remaining budget (:func:`check_plan`) — refused with
   :class:`~odp.errors.BudgetExceeded` before anything is drawn or recorded;
3. runs the rounds one by one.

Step 2 reads the remaining budget once, so it is advisory when several processes share one
ledger: another process may spend between the check and a later round, which is then refused.
A later round may also fail.  Either way the rounds already made are recorded and paid for, so
their releases must not be lost: :func:`keep_partial` attaches them to the error as its
``partial`` attribute (the helper's result object, marked incomplete) before it is re-raised.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..accountant import Accountant
from ..budget import Budget, format_fraction
from ..errors import BudgetExceeded

__all__ = ["check_plan", "keep_partial"]


def check_plan(accountant: Accountant, epsilon: Fraction, delta: Fraction, what: str) -> None:
    """Refuse (``BudgetExceeded``, nothing recorded) a plan whose worst case ``(ε, δ)`` does
    not fit in ``accountant.remaining`` now."""
    plan = Budget(epsilon, delta)
    remaining = accountant.remaining
    if not plan.fits_in(remaining):
        raise BudgetExceeded(
            f"{what} needs ε={format_fraction(plan.epsilon)}, δ={format_fraction(plan.delta)} "
            f"but only ε={format_fraction(remaining.epsilon)}, "
            f"δ={format_fraction(remaining.delta)} remains; nothing was drawn or recorded",
            requested=plan, remaining=remaining)


def keep_partial(error: BaseException, partial: Any) -> None:
    """Attach the releases made so far to ``error`` (as ``error.partial``) before it is
    re-raised, with a note saying so."""
    try:
        error.partial = partial  # type: ignore[attr-defined]
    except AttributeError:  # an exception type that refuses new attributes
        return
    add_note = getattr(error, "add_note", None)  # Python >= 3.11
    if callable(add_note):
        add_note("the releases made before this error are in its .partial attribute "
                 "(their rounds are recorded in the ledger)")
