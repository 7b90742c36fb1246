"""The common interface of privacy filters and odometers (Haney et al. 2023, Defs 1.10–1.16;
Rogers, Roth, Ullman, Vadhan 2016, Defs 3.1–3.2).

* A **privacy-loss accumulator** G maps the parameters d_1, …, d_k of the mechanisms accepted
  so far to a global loss (Haney et al. 2023, Def. 1.15).  Every accumulator here is a running sum
  (or a function of running sums), so one round costs O(1) exact rational operations.
* An **odometer** (:class:`PrivacyOdometer`) records every round and answers
  :meth:`~PrivacyOdometer.privacy_loss` = G(d_1, …, d_k) without changing state (Def. 1.12).
  Its value is meaningful against a threshold fixed *before* the interaction (Haney et al. 2023's
  truncated-view semantics, Def. 1.14), not as an ex-post guarantee.
* A **filter** (:class:`PrivacyFilter`) holds a budget d fixed up front and continues with the
  next mechanism iff G(d_1, …, d_k, d_{k+1}) ≤ d (Lemma 2.19).  The check is made on the
  *pending* sequence, before the mechanism runs.  Where G is irrational (square roots, logs)
  the comparison is decided with rigorous rational brackets and refinement; if it cannot be
  decided it refuses, so a filter never continues on a rounding error.

Refusal semantics.  By default a refused request changes nothing: the analyst may try a
smaller request afterwards ("refuse the current query", the equivalent alternative of Haney et
al. 2023, §1.4 — valid because the decision depends only on parameters the analyst chose).  With
``halt_on_refusal=True`` the filter halts for ever at the first refusal (that paper's HALT,
OpenDP's behaviour).  Every rule here is monotone — once G exceeds d, adding rounds keeps it
above d — so accepted histories are exactly the prefixes of admissible sequences.

Filters and odometers are thread-safe: :meth:`PrivacyFilter.continue_with` checks and records
atomically, so concurrent callers can never overspend.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from fractions import Fraction
from typing import Generic, Iterable, TypeVar, Union

from ..budget import Budget, format_fraction
from ..errors import BudgetExceeded
from ..guarantees import RDP, ZCDP
from ..protocols import CostLike, PrivacyCost

__all__ = ["PrivacyFilter", "PrivacyOdometer", "Accumulator", "FilterLoss"]

#: The normalised cost of one round in an accumulator's measure.
Cost = TypeVar("Cost")
#: The accumulator's running state.
State = TypeVar("State")
#: A privacy loss or budget in one of the filters' measures: (ε, δ), zCDP or RDP at one order.
FilterLoss = Union[Budget, ZCDP, RDP]


def _fmt(cost: object) -> str:
    """Short exact text for a normalised cost."""
    if isinstance(cost, tuple) and len(cost) == 2:
        return f"ε={format_fraction(cost[0])}, δ={format_fraction(cost[1])}"
    if isinstance(cost, Fraction):
        return format_fraction(cost)
    return str(cost)


class Accumulator(ABC, Generic[Cost, State]):
    """A privacy-loss accumulator G, evaluated incrementally over normalised costs."""

    #: The privacy measure the costs are in ("approx-dp", "zcdp", "rdp").
    measure: str = "abstract"

    @abstractmethod
    def parse(self, cost: CostLike) -> Cost:
        """Normalise a user cost (a number, a guarantee, a mechanism, …) to this measure's
        parameter; raise :class:`odp.errors.InvalidParameter` (changing nothing) if it cannot."""

    @abstractmethod
    def to_cost(self, cost: Cost) -> PrivacyCost:
        """A parsed cost as a value of the vocabulary (:mod:`odp.guarantees`), for callers
        outside the filter (``parse(to_cost(c)) == c``)."""

    @abstractmethod
    def zero(self) -> State:
        """The state of the empty history."""

    @abstractmethod
    def add(self, state: State, cost: Cost) -> State:
        """The state after one more (parsed) cost.  Must not mutate ``state``."""

    @abstractmethod
    def loss(self, state: State) -> FilterLoss:
        """G of the history: exact, or an upper bound rounded up (documented per class)."""


class PrivacyOdometer(Generic[Cost, State]):
    """Records every round; :meth:`privacy_loss` reports G(d_1, …, d_k) (Haney et al. 2023,
    Alg. 4)."""

    def __init__(self, accumulator: Accumulator[Cost, State]):
        self._acc = accumulator
        self._state = accumulator.zero()
        self._rounds: list[Cost] = []
        self._lock = threading.Lock()

    @property
    def measure(self) -> str:
        return self._acc.measure

    @property
    def rounds(self) -> tuple[Cost, ...]:
        """The recorded (normalised) costs, in order."""
        with self._lock:
            return tuple(self._rounds)

    def __len__(self) -> int:
        return len(self._rounds)

    def record(self, cost: CostLike) -> None:
        """Record one launched mechanism's parameter (Alg. 4 line 3)."""
        parsed = self._acc.parse(cost)
        with self._lock:
            self._state = self._acc.add(self._state, parsed)
            self._rounds.append(parsed)

    def privacy_loss(self) -> FilterLoss:
        """G(d_1, …, d_k): deterministic and side-effect free (Def. 1.12)."""
        with self._lock:
            return self._acc.loss(self._state)

    def privacy_loss_with(self, cost: CostLike) -> FilterLoss:
        """What :meth:`privacy_loss` would be after recording ``cost`` (nothing recorded)."""
        parsed = self._acc.parse(cost)
        with self._lock:
            return self._acc.loss(self._acc.add(self._state, parsed))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(rounds={len(self)}, privacy_loss={self.privacy_loss()})"


class PrivacyFilter(ABC, Generic[Cost, State]):
    """A privacy filter with a budget fixed up front: CONT iff G(pending history) ≤ budget.

    Subclasses provide the accumulator and :meth:`_within` (the rigorous comparison with the
    budget) and :meth:`remaining`.
    """

    #: Short name used in messages and ledgers.
    name: str = "filter"

    def __init__(self, accumulator: Accumulator[Cost, State], *, halt_on_refusal: bool = False):
        self._acc = accumulator
        self._state = accumulator.zero()
        self._rounds: list[Cost] = []
        self._lock = threading.RLock()
        self._halt_on_refusal = bool(halt_on_refusal)
        self._halted = False

    # ------------------------------------------------------------------ rule
    @abstractmethod
    def _within(self, state: State) -> bool:
        """G(state) ≤ budget, decided rigorously (False when undecidable)."""

    @property
    @abstractmethod
    def budget(self) -> FilterLoss:
        """The budget d fixed at construction."""

    @abstractmethod
    def remaining(self) -> FilterLoss:
        """What is left, in the measure's units (documented per class as exact or a lower
        bound on the largest next request that would still be accepted)."""

    # ------------------------------------------------------------------ state
    @property
    def measure(self) -> str:
        return self._acc.measure

    @property
    def accumulator(self) -> Accumulator[Cost, State]:
        return self._acc

    @property
    def halted(self) -> bool:
        """True once a refusal halted the filter (only with ``halt_on_refusal=True``)."""
        return self._halted

    @property
    def rounds(self) -> tuple[Cost, ...]:
        """The accepted (normalised) costs, in order."""
        with self._lock:
            return tuple(self._rounds)

    def __len__(self) -> int:
        return len(self._rounds)

    def privacy_loss(self) -> FilterLoss:
        """The odometer reading G(accepted rounds) (Haney et al. 2023, Lemma 2.19)."""
        with self._lock:
            return self._acc.loss(self._state)

    def parse(self, cost: CostLike) -> Cost:
        """Normalise ``cost`` to this filter's measure (raises ``InvalidParameter``)."""
        return self._acc.parse(cost)

    def admits_sequence(self, costs: Iterable[CostLike]) -> bool:
        """The rule F_d applied to a whole sequence from scratch (no state involved)."""
        state = self._acc.zero()
        for c in costs:
            state = self._acc.add(state, self._acc.parse(c))
        return self._within(state)

    # ------------------------------------------------------------------ decisions
    def would_continue(self, cost: CostLike) -> bool:
        """Would :meth:`continue_with` accept ``cost`` now?  Changes nothing."""
        parsed = self._acc.parse(cost)
        with self._lock:
            return not self._halted and self._within(self._acc.add(self._state, parsed))

    def continue_with(self, cost: CostLike) -> bool:
        """CONT (record ``cost`` and return True) iff G(accepted + [cost]) ≤ budget; else
        return False.  A refusal records nothing (and halts the filter for ever only with
        ``halt_on_refusal=True``).  An invalid cost raises and changes nothing."""
        parsed = self._acc.parse(cost)
        with self._lock:
            if self._halted:
                return False
            new_state = self._acc.add(self._state, parsed)
            if not self._within(new_state):
                if self._halt_on_refusal:
                    self._halted = True
                return False
            self._state = new_state
            self._rounds.append(parsed)
            return True

    def charge(self, cost: CostLike, *, what: str = "the request") -> None:
        """:meth:`continue_with`, raising :class:`odp.errors.BudgetExceeded` on refusal."""
        if not self.continue_with(cost):
            rem = self.remaining()
            raise BudgetExceeded(
                f"{self.name} refused {what} (cost {_fmt(self._acc.parse(cost))}) after "
                f"{len(self)} accepted rounds: privacy loss so far {self.privacy_loss()}, "
                f"budget {self.budget}"
                + ("; the filter has halted" if self._halted else "; nothing was recorded"),
                requested=None, remaining=rem if isinstance(rem, Budget) else None,
            )

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(budget={self.budget}, rounds={len(self)}, "
                f"privacy_loss={self.privacy_loss()})")
