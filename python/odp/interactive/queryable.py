"""Interactive mechanisms as *queryables* (Haney et al. 2023, Def. 1.4): a state machine that is
initialised with the dataset and then answers queries one at a time, keeping its state
between them.

* :class:`InteractiveMechanism` — what an analyst launches: a declared privacy cost (fixed
  before it starts; the whole lifetime of the child is paid for at launch) and
  :meth:`~InteractiveMechanism.start`, which receives the data and returns a :class:`Queryable`.
* :class:`Queryable` — the running state.  :meth:`~Queryable.query` is serialised by a
  per-queryable lock, so several threads may query one child safely; :meth:`~Queryable.close`
  ends it (later queries raise) and may report the realised ODP class of the whole session
  (used for ODP refunds, see :mod:`odp.interactive.composition`).

The concurrent-composition theorems for (ε, δ)-DP (Vadhan–Zhang, Lyu; Haney et al. 2023 Thm. 1.8 and
Cor. 3.5) assume *finite communication*: a child must answer finitely many queries.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from typing import Any, Callable

from ..errors import InvalidParameter
from ..neighbours import Neighbours
from ..protocols import CostLike
from ..types import Data, Label, RandomSource

__all__ = ["Queryable", "InteractiveMechanism", "QueryableClosed", "Query", "Answer"]

#: A query to a queryable and its answer: whatever the interactive mechanism defines (Haney et
#: al. 2023, Def. 1.4 — a number, a threshold test, a nested mechanism to launch …), hence ``Any``.
Query = Any
Answer = Any


class QueryableClosed(InvalidParameter):
    """A query was sent to a queryable that has been closed (or was never started)."""


class Queryable(ABC):
    """The running state of an interactive mechanism."""

    name: str = "queryable"

    def __init__(self) -> None:
        self._qlock = threading.RLock()
        self._closed = False
        self._answered = 0
        self._on_close: list[Callable[[], None]] = []

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def answered(self) -> int:
        """How many queries this queryable has answered."""
        return self._answered

    @abstractmethod
    def _answer(self, query: Query) -> Answer:
        """Answer one query (called with the queryable's lock held)."""

    def _finish(self) -> Label | None:
        """Called once on close; may return the realised ODP class label of the session."""
        return None

    def query(self, query: Query) -> Answer:
        """Answer ``query`` (thread-safe; raises :class:`QueryableClosed` once closed)."""
        with self._qlock:
            if self._closed:
                raise QueryableClosed(f"{self.name} is closed; it answers no more queries")
            answer = self._answer(query)
            self._answered += 1
            return answer

    def close(self) -> Label | None:
        """End the session; returns the realised class label (None if the queryable does not
        track one).  Closing twice is a no-op returning None."""
        with self._qlock:
            if self._closed:
                return None
            self._closed = True
            try:
                return self._finish()
            finally:
                hooks: list[Callable[[], None]] = getattr(self, "_on_close", [])
                self._on_close = []
                for hook in hooks:
                    hook()

    def _notify_on_close(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` once this queryable closes (a parent composition's bookkeeping of
        its open children; a hook must be quick and must not raise)."""
        with self._qlock:
            if not hasattr(self, "_on_close"):  # a subclass that skipped Queryable.__init__
                self._on_close = []
            if self._closed:
                hook()
            else:
                self._on_close.append(hook)

    def __enter__(self) -> "Queryable":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class InteractiveMechanism(ABC):
    """An interactive mechanism with a privacy cost declared before it starts.

    ``cost`` is expressed in the parent's privacy measure: an :class:`odp.DP` / :class:`odp.ODP`
    (or ``(ε, δ)``) under a basic/Whitehouse filter or an :class:`odp.Accountant`,
    :class:`odp.filters.ZCDP` under a zCDP filter, :class:`odp.filters.RDP` under an RDP filter.
    """

    name: str = "interactive"
    #: The neighbouring relation its cost holds for (:mod:`odp.neighbours`), like
    #: :attr:`odp.Mechanism.neighbours`: a composition of another relation refuses to launch
    #: it, before anything is charged.  ``None``: the composition's (its author's claim).
    neighbours: Neighbours | None = None

    @property
    @abstractmethod
    def cost(self) -> CostLike:
        """The declared, data-independent privacy cost of the whole session."""

    @abstractmethod
    def start(self, data: Data, rng: RandomSource) -> Queryable:
        """Initialise with the dataset (the first message of Def. 1.4); return the queryable."""

    def params(self) -> dict[str, Any]:  # Any: JSON values
        """JSON-able parameters for ledgers."""
        return {}
