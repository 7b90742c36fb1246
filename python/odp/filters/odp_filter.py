"""The ODP filter (paper 002, App. A: Def. 19, Alg. 6) as an admission rule for
:class:`odp.Accountant`.

Alg. 6 line 4 asks a filter function F_{ε_t,δ_t} whether the adversary may run the next
mechanism, given the *realised* sequence (ε^1, δ_1, …, ε^{i−1}, δ_{i−1}) — ε^j = ℰ_j(P_{j,k}) is
the cost of the class the j-th release fell in — followed by the candidate's worst case
(sup_P ℰ_i(P), δ_i).  :class:`ODPFilter` evaluates exactly that on the accountant's ledger
(``Accountant(admission=ODPFilter(...))``), atomically inside the ledger's lock; rounds still
pending are held at their sup, which can only make the rule stricter for the monotone rules
used here.

Which filter functions are valid ODP filters (Def. 19)?

* **The sum filter** — HALT iff Σ ε^j + sup ℰ_i > ε_t or Σ δ_j + δ_i > δ_t — is valid: Alg. 6
  with it is Alg. 1, and Theorem 7 applies (paper 002, App. A).  It is the default, and
  ``Accountant(admission=ODPFilter())`` produces the same ledger as ``Accountant()`` on the same
  run (``tests/test_odp_filter.py``).
* **Nothing else is known to be valid.**  In particular, no "advanced" ODP filter (advanced
  composition applied to the realised ε^j) is proven: paper 002 leaves it open, and even for
  plain DP, advanced composition applied to realised, adaptively chosen ε_i is *invalid*
  (paper 001).  :class:`ODPFilter` therefore refuses a custom function unless the caller states
  the proof it relies on (``proof="…"``); the proof is recorded on the object for audit.

A ledger admitted by any rule other than the sum filter can hold more than the sum of its
charges allows; its "remaining" and a sum-rule certificate check then no longer describe it.
To use the Whitehouse et al. filter (no ODP refunds), use :class:`odp.filters.WhitehouseFilter`
directly or through :mod:`odp.concurrent`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Callable, Sequence

from ..budget import Budget
from ..errors import InvalidParameter
from ..ledger import BudgetState, RoundRequest, sum_rule

__all__ = ["sum_filter", "realised_sequence", "ODPFilter"]

#: A filter function of Def. 19: ``F(budget, sequence) -> bool`` (True = CONT), where
#: ``sequence`` is the realised ``[(ε^1, δ_1), …, (ε^{i−1}, δ_{i−1}), (sup ℰ_i, δ_i)]``.
FilterFunction = Callable[[Budget, Sequence[tuple[Fraction, Fraction]]], bool]


def sum_filter(budget: Budget, sequence: Sequence[tuple[Fraction, Fraction]]) -> bool:
    """The sum filter of paper 002 App. A written as Def. 19 has it: CONT iff
    Σ ε^j ≤ ε_t and Σ δ_j ≤ δ_t over the whole sequence (valid by Theorem 7)."""
    eps = sum((e for e, _ in sequence), Fraction(0))
    dlt = sum((d for _, d in sequence), Fraction(0))
    return eps <= budget.epsilon and dlt <= budget.delta


def realised_sequence(state: BudgetState, request: RoundRequest
                      ) -> list[tuple[Fraction, Fraction]]:
    """The input of Alg. 6 line 4 read off a ledger: the realised (ε^j, δ_j) of every reserved
    round (pending ones at their sup), then the candidate's (sup ℰ_i, δ_i)."""
    seq = [(r.epsilon_held, r.delta) for r in state.rounds]
    seq.append((request.sup_epsilon, request.delta))
    return seq


class ODPFilter:
    """Alg. 6 line 4 as an ``admission`` rule ``(state, request) -> bool`` for
    :class:`odp.Accountant`.

    ``ODPFilter()`` is the sum filter (Theorem 7), evaluated in O(1) from the ledger's running
    totals.  ``ODPFilter(function, proof="…")`` evaluates a custom filter function of the
    realised sequence (O(rounds) per admission); ``proof`` must say why the function is a
    valid ODP filter (Def. 19) — without one it is refused.
    """

    def __init__(self, function: FilterFunction | None = None, *, proof: str | None = None,
                 name: str | None = None):
        if function is None:
            self.function: FilterFunction = sum_filter
            self.proof = "paper 002, App. A: Alg. 6 with the sum filter is Alg. 1 (Theorem 7)"
            self.__name__ = name or "odp_sum_filter"
            self._fast = True
            return
        if not callable(function):
            raise InvalidParameter("the filter function must be callable (budget, sequence) -> bool")
        if not proof or not str(proof).strip():
            raise InvalidParameter(
                "no proof that this function is a valid ODP filter (paper 002, Def. 19): only "
                "the sum filter is known to be valid (Theorem 7); advanced composition applied "
                "to realised costs is not (paper 001).  Pass proof='…' naming the result you "
                "rely on")
        self.function = function
        self.proof = str(proof)
        self.__name__ = name or getattr(function, "__name__", "odp_filter")
        self._fast = False

    def __call__(self, state: BudgetState, request: RoundRequest) -> bool:
        if self._fast:  # Σ over the realised sequence = the ledger's running totals (Alg. 1)
            return sum_rule(state, request)
        return bool(self.function(state.budget, realised_sequence(state, request)))

    def __repr__(self) -> str:
        return f"ODPFilter({self.__name__}; valid by: {self.proof})"
