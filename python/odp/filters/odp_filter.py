"""The ODP filter (Hartmann et al. 2022, App. A: Def. 19, Alg. 6) as an admission rule for
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
  with it is Alg. 1, and Theorem 7 applies (Hartmann et al. 2022, App. A).  It is the default, and
  ``Accountant(admission=ODPFilter())`` produces the same ledger as ``Accountant()`` on the same
  run (``tests/test_odp_filter.py``).
* **Nothing else is known to be valid.**  In particular, no "advanced" ODP filter (advanced
  composition applied to the realised ε^j) is proven: Hartmann et al. 2022 leave it open, and even
  for plain DP, advanced composition applied to realised, adaptively chosen ε_i is *invalid*
  (Rogers, Roth, Ullman, Vadhan 2016).  :class:`ODPFilter` therefore refuses a custom function
  unless the caller states the proof it relies on (``proof="…"``); the proof is recorded on the
  object for audit.

A ledger admitted by any rule other than the sum filter can hold more than the sum of its
charges allows; its "remaining" and a sum-rule certificate check then no longer describe it.
To use the Whitehouse et al. filter (no ODP refunds), use :class:`odp.filters.WhitehouseFilter`
directly or through :mod:`odp.interactive`.

Cost per admission.  A plain filter function sees the whole realised sequence, so it costs
O(rounds) per admission and O(rounds²) over a run.  Written as an :class:`IncrementalFilter`
(a fold: ``start``, ``fold`` one realised (ε^j, δ_j), ``admits``), each admission folds only
the rounds new since the last one and checks the rounds still open (O(open rounds)), so a run
whose reservations stay open in any number, for any time, costs O(rounds × open rounds) —
O(rounds) with a bounded number open (``bench/scaling.py``).  One more cost, for an
order-sensitive fold only: when a round that was folded while pending (at its sup) settles,
the next admission refolds it and every round reserved after it, once (the fold may depend on
its final cost at its position); a symmetric fold never refolds.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from fractions import Fraction
from typing import Any, Callable, Generic, Sequence, TypeVar

from ..budget import Budget
from ..errors import InvalidParameter
from ..ledger import BudgetState, RoundRecord, RoundRequest, sum_rule

__all__ = ["sum_filter", "realised_sequence", "ODPFilter", "IncrementalFilter"]

#: A filter function of Def. 19: ``F(budget, sequence) -> bool`` (True = CONT), where
#: ``sequence`` is the realised ``[(ε^1, δ_1), …, (ε^{i−1}, δ_{i−1}), (sup ℰ_i, δ_i)]``.
FilterFunction = Callable[[Budget, Sequence[tuple[Fraction, Fraction]]], bool]

#: The state of an :class:`IncrementalFilter`'s fold (chosen by the filter).
FoldState = TypeVar("FoldState")


def sum_filter(budget: Budget, sequence: Sequence[tuple[Fraction, Fraction]]) -> bool:
    """The sum filter of Hartmann et al. 2022 App. A written as Def. 19 has it: CONT iff
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


class IncrementalFilter(ABC, Generic[FoldState]):
    """A filter function F of Def. 19 written as a fold over the realised sequence:

        F(budget, [s_1, …, s_n]) = admits(budget, fold(…fold(start(budget), s_1)…, s_n))

    with each ``s_j = (ε^j, δ_j)`` (the candidate's ``(sup ℰ_i, δ_i)`` last).  Calling the
    object on a whole sequence evaluates exactly that (it *is* a filter function), so the
    proof obligation is the same as for any custom function: F must be a valid ODP filter
    (Hartmann et al. 2022, Def. 19), and :class:`ODPFilter` still demands ``proof="…"``.

    Under :class:`ODPFilter` the ledger's rounds are folded in reservation (Alg. 1) order,
    pending ones at their sup, and the fold is kept between admissions, with the state before
    each round folded while pending.  An admission checks those open rounds (O(open rounds)),
    folds the rounds reserved since the last admission, and — if a round folded while pending
    has settled since — first goes back to the state before the earliest such round and refolds
    from there (an order-sensitive F may depend on its final cost at its position).  So a run
    with a bounded number of open rounds costs O(rounds), also with one reservation held open
    throughout; only a round that settles after many later rounds were reserved costs a refold
    of those, once.  Set ``symmetric = True`` only if F does not depend on the order of the
    sequence (F(π(s)) = F(s) for every permutation π — part of the stated proof): settled rounds
    are then folded in the order they settle and only the pending ones are re-folded
    (O(open rounds) per admission, never a refold of settled rounds).

    ``fold`` must not mutate its input state (the cached states are reused).
    """

    #: True only if F is order-insensitive (see the class docstring).
    symmetric: bool = False

    @abstractmethod
    def start(self, budget: Budget) -> FoldState:
        """The state of the empty sequence."""

    @abstractmethod
    def fold(self, state: FoldState, epsilon: Fraction, delta: Fraction) -> FoldState:
        """The state after one more element (ε^j, δ_j).  Must not mutate ``state``."""

    @abstractmethod
    def admits(self, budget: Budget, state: FoldState) -> bool:
        """CONT (True) or HALT (False) for the folded sequence."""

    def __call__(self, budget: Budget, sequence: Sequence[tuple[Fraction, Fraction]]) -> bool:
        state = self.start(budget)
        for epsilon, delta in sequence:
            state = self.fold(state, epsilon, delta)
        return bool(self.admits(budget, state))


class _Folded:
    """What an :class:`ODPFilter` has folded of one ledger's rounds."""

    __slots__ = ("ledger_state", "rounds", "done", "state", "pending", "opens")

    def __init__(self, ledger_state: BudgetState, start: object):
        self.ledger_state = ledger_state
        self.rounds = ledger_state.rounds  # the list object: a replaced list is a new history
        self.done = 0  # rounds[:done] looked at (ordered: all folded; symmetric: see pending)
        self.state = start
        self.pending: dict[int, None] = {}  # symmetric mode: positions < done not yet folded
        #: ordered mode: (position, the pending record folded there at its sup, the state
        #: before it), in position order; ``state`` is valid while each is still that record
        self.opens: list[tuple[int, RoundRecord, object]] = []


class ODPFilter:
    """Alg. 6 line 4 as an ``admission`` rule ``(state, request) -> bool`` for
    :class:`odp.Accountant`.

    ``ODPFilter()`` is the sum filter (Theorem 7), evaluated in O(1) from the ledger's running
    totals.  ``ODPFilter(function, proof="…")`` evaluates a custom filter function of the
    realised sequence: a plain function costs O(rounds) per admission, an
    :class:`IncrementalFilter` O(1) amortised plus O(open rounds) (see its docstring for the
    one refold an order-sensitive fold makes when a round open long ago settles).
    ``proof`` must say why the function is a valid ODP filter (Def. 19) — without one it is
    refused.
    """

    #: Ledgers whose folded prefix is kept (one is enough for one accountant).
    CACHE = 8

    def __init__(self, function: FilterFunction | None = None, *, proof: str | None = None,
                 name: str | None = None):
        self._incremental: IncrementalFilter[Any] | None = None
        if function is None:
            self.function: FilterFunction = sum_filter
            self.proof = ("Hartmann et al. 2022, App. A: Alg. 6 with the sum filter is Alg. 1 "
                          "(Theorem 7)")
            self.__name__ = name or "odp_sum_filter"
            self._fast = True
            return
        if not callable(function):
            raise InvalidParameter("the filter function must be callable (budget, sequence) -> bool")
        if not proof or not str(proof).strip():
            raise InvalidParameter(
                "no proof that this function is a valid ODP filter (Hartmann et al. 2022, "
                "Def. 19): only the sum filter is known to be valid (Theorem 7); advanced "
                "composition applied to realised costs is not (Rogers, Roth, Ullman, Vadhan "
                "2016).  Pass proof='…' naming the result you rely on")
        self.function = function
        self.proof = str(proof)
        self.__name__ = name or getattr(function, "__name__", None) or type(function).__name__
        self._fast = False
        if isinstance(function, IncrementalFilter):
            self._incremental = function
            self._folds: dict[int, _Folded] = {}
            self._lock = threading.Lock()

    @property
    def is_sum_rule(self) -> bool:
        """True iff this filter decides exactly Alg. 1's sum rule: it was made as
        ``ODPFilter()`` (no function, so :meth:`__call__` is :func:`odp.ledger.sum_rule`) and is
        not a subclass (which could decide otherwise).  :class:`odp.Accountant` keeps its
        transition re-check on by default for such a filter."""
        return type(self) is ODPFilter and self._fast

    def __call__(self, state: BudgetState, request: RoundRequest) -> bool:
        if self._fast:  # Σ over the realised sequence = the ledger's running totals (Alg. 1)
            return sum_rule(state, request)
        if self._incremental is not None:
            with self._lock:
                return self._admit_incremental(state, request)
        return bool(self.function(state.budget, realised_sequence(state, request)))

    # ------------------------------------------------------------------ incremental
    def _folded(self, ledger_state: BudgetState, f: IncrementalFilter[Any]) -> _Folded:
        entry = self._folds.get(id(ledger_state))
        if (entry is None or entry.ledger_state is not ledger_state
                or entry.rounds is not ledger_state.rounds
                or len(ledger_state.rounds) < entry.done):
            if len(self._folds) >= self.CACHE:
                self._folds.clear()
            entry = _Folded(ledger_state, f.start(ledger_state.budget))
            self._folds[id(ledger_state)] = entry
        return entry

    def _admit_incremental(self, ledger_state: BudgetState, request: RoundRequest) -> bool:
        f = self._incremental
        assert f is not None
        entry = self._folded(ledger_state, f)
        rounds = ledger_state.rounds
        n = len(rounds)
        state = entry.state
        if f.symmetric:
            for pos in range(entry.done, n):
                entry.pending[pos] = None
            entry.done = n
            for pos in [p for p in entry.pending if rounds[p].status != "pending"]:
                rec = rounds[pos]
                state = f.fold(state, rec.epsilon_held, rec.delta)
                del entry.pending[pos]
            entry.state = state
            open_rounds = [rounds[p] for p in entry.pending]
            for rec in open_rounds:  # pending rounds at their sup
                state = f.fold(state, rec.epsilon_held, rec.delta)
        else:
            state = self._advance_ordered(entry, f, rounds)
        state = f.fold(state, request.sup_epsilon, request.delta)
        return bool(f.admits(ledger_state.budget, state))

    @staticmethod
    def _advance_ordered(entry: _Folded, f: IncrementalFilter[Any],
                         rounds: list[RoundRecord]) -> Any:
        """The fold of all of ``rounds`` in reservation order, pending ones at their sup.

        ``entry.state`` folds ``rounds[:entry.done]`` as they were when folded: settled rounds
        never change, and a pending one changes only by being replaced (settled).  So the fold
        is still valid up to the first pending round folded at its sup that has been replaced
        since; from there on it is refolded (an order-sensitive F may depend on that round's
        final cost at its position, so what follows cannot be kept), from the state saved
        before it.  Cost: O(open rounds) to check, plus the rounds new since the last admission,
        plus — once per admission after a settle — the rounds reserved after the earliest
        round settled since."""
        opens = entry.opens
        for k, (pos, rec, before) in enumerate(opens):
            if rounds[pos] is not rec:  # settled (or replaced) since it was folded at its sup
                entry.done, entry.state = pos, before
                del opens[k:]
                break
        state = entry.state
        for pos in range(entry.done, len(rounds)):
            rec = rounds[pos]
            if rec.status == "pending":
                opens.append((pos, rec, state))
            state = f.fold(state, rec.epsilon_held, rec.delta)
        entry.done, entry.state = len(rounds), state
        return state

    def __repr__(self) -> str:
        return f"ODPFilter({self.__name__}; valid by: {self.proof})"
