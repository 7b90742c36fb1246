"""Concurrent composition of interactive mechanisms with adaptive privacy-loss parameters
(Haney et al. 2023: F_d-FilterCon(IM), Alg. 3 / Def. 2.7, and G-OdomCon(IM), Alg. 6).

:class:`ConcurrentComposition` holds the dataset and a budget and lets the analyst

* **launch** interactive children at any time, with adaptively chosen costs — including from
  inside a running child (a child may itself be a :class:`ConcurrentComposition`, see
  :class:`SubComposition`);
* **query** any open child, interleaving freely across children and threads;
* **run** ordinary (non-interactive) odp mechanisms.

Each child's declared cost is charged **once, at launch**, for its whole lifetime; queries to
children never touch the parent's budget (Haney et al. 2023, §1.4).  The budget is either

* a filter from :mod:`odp.filters` — :class:`~odp.filters.BasicFilter` (pure or approximate
  DP: Thm. 1.20 / Cor. 3.5, finite communication), :class:`~odp.filters.WhitehouseFilter`
  (Thm. 3.7), :class:`~odp.filters.ZCDPFilter` (Thm. 4.10), :class:`~odp.filters.RDPFilter`
  (Thm. 4.6) — whose odometer is then the parent's privacy loss; or
* an :class:`odp.Accountant`: each child is an *interactive* reservation of its declared DP/ODP
  guarantee.  A child that reports its realised class when it closes is refunded down to that
  class's cost **only if no other round was reserved on the ledger while it was open**
  (otherwise it is charged its sup, reason ``interactive-overlap``: a refund is sound only
  for a sequential run of Alg. 1 of Hartmann et al. 2022).

Randomness.  Under a filter, children and :meth:`ConcurrentComposition.run` draw from the
composition's ``rng`` (:class:`~odp.samplers.SecureRandom` by default).  Under an Accountant they
draw from the *accountant's* rng, which is the one the ledger describes: its rounds are marked
``"insecure_rng": true`` exactly when that rng is insecure.  An ``rng`` override is therefore
refused under an Accountant (:class:`~odp.errors.InvalidParameter`): pass the generator to the
Accountant instead, e.g. ``Accountant(…, rng=SeededRandom(1))`` for reproducible tests.

One neighbouring relation (:mod:`odp.neighbours`).  Theorem 7 of Hartmann et al. 2022 — and
the concurrent composition theorems of Haney et al. 2023 alike — compose guarantees that all
hold for one relation between datasets.  A composition therefore carries one,
:attr:`ConcurrentComposition.neighbours`: its accountant's under an Accountant, else the one
given (``neighbours=``; default :attr:`~odp.Neighbours.REPLACE_ONE`, the relation of odp's
built-in mechanisms and of a default accountant).  A :class:`SubComposition` inherits its
parent's.  Every child launched and every mechanism run under it is checked like
:meth:`odp.Accountant.run` checks a mechanism: one whose ``neighbours`` attribute — or whose
declared cost (:func:`odp.neighbours.stated`, e.g. the add/remove RDP curves of
:mod:`odp.rdp`) — names another relation is refused before anything is charged or drawn
(:class:`~odp.errors.NeighboursMismatch`).  Without the attribute, the composition's (the
author's claim).

Measures without a concurrent composition theorem.  Approximate zCDP (a
:class:`~odp.filters.ZCDP` cost with δ > 0) has none (Haney et al. 2023, Sec. 4): such a child is
refused while any other child is open, and while it is open no other child may be launched
(:class:`ConcurrentCompositionRefused`).  Close the others first; the composition is then
sequential, which the approximate-zCDP filter of Whitehouse et al. 2023 covers.

Thread safety: launches (sequentiality check + charge + registration) are atomic under one
lock; the filter's own check-and-record is atomic; each child serialises its own queries.
Concurrent launches from many threads can never overspend.
"""

from __future__ import annotations

import threading
from typing import Any

from ..accountant import Accountant, Reservation, check_before_release
from ..budget import Budget
from ..errors import InvalidGuarantee, InvalidParameter
from ..filters.base import FilterLoss, PrivacyFilter
from ..guarantees import DP, ODP, ZCDP
from ..ledger import REASON_CLOSED
from ..neighbours import Neighbours, mismatch, stated
from ..protocols import CostLike, PrivacyCost
from ..samplers import SecureRandom
from ..types import Data, Label, RandomSource
from .queryable import Answer, InteractiveMechanism, Query, Queryable, QueryableClosed

#: A filter of :mod:`odp.filters` of any measure.
AnyFilter = PrivacyFilter[Any, Any]  # Any: the parent accepts a filter of every measure

__all__ = ["ConcurrentComposition", "SubComposition", "ConcurrentCompositionRefused"]


class ConcurrentCompositionRefused(InvalidGuarantee):
    """A launch that no concurrent composition theorem covers (approximate zCDP while another
    child is open, or any launch while such a child is open).  Nothing was charged."""


class _Child:
    __slots__ = ("mechanism", "queryable", "cost", "sequential", "reservation", "index")

    def __init__(self, *, mechanism: InteractiveMechanism, queryable: Queryable, cost: PrivacyCost,
                 sequential: bool, reservation: Reservation | None, index: int):
        self.mechanism, self.queryable, self.cost = mechanism, queryable, cost
        self.sequential, self.reservation, self.index = sequential, reservation, index


class ChildHandle:
    """The analyst's handle on a launched child: ``query`` routes to the child's queryable
    (no budget check: its budget was paid at launch); ``close`` ends it (and settles its
    ODP reservation under an accountant)."""

    def __init__(self, parent: "ConcurrentComposition", child: _Child):
        self._parent, self._child = parent, child

    @property
    def index(self) -> int:
        """1-based launch position in the parent."""
        return self._child.index

    @property
    def cost(self) -> PrivacyCost:
        """The child's cost as charged, in the parent's measure (:mod:`odp.guarantees`)."""
        return self._child.cost

    @property
    def queryable(self) -> Queryable:
        return self._child.queryable

    @property
    def closed(self) -> bool:
        return self._child.queryable.closed

    def query(self, query: Query) -> Answer:
        return self._child.queryable.query(query)

    # conveniences when the child is itself a composition
    def launch(self, mechanism: InteractiveMechanism) -> "ChildHandle":
        handle: ChildHandle = self.query(mechanism)
        return handle

    def run(self, mechanism: Any) -> Answer:  # Any: an odp mechanism (duck-typed release)
        return self.query(mechanism)

    def privacy_loss(self) -> FilterLoss | Budget:
        q = self._child.queryable
        if not isinstance(q, ConcurrentComposition):
            raise InvalidParameter("this child is not a composition; it has no odometer")
        return q.privacy_loss()

    def close(self) -> Label | None:
        return self._parent._close_child(self._child)

    def __enter__(self) -> "ChildHandle":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self.closed else "open"
        return f"ChildHandle(#{self.index} {getattr(self._child.mechanism, 'name', '?')}, {state})"


class ConcurrentComposition(Queryable):
    """F_d-FilterCon(IM) over ``data`` with budget ``budget`` (a filter or an Accountant).

    As a :class:`Queryable` (so compositions nest), ``query(x)`` launches ``x`` if it is an
    :class:`InteractiveMechanism` and runs it if it is an odp mechanism.

    ``rng``: the randomness of the children under a filter (default: secure).  Under an
    Accountant the accountant's own rng is used, so that its ledger flags insecure randomness
    correctly; giving another ``rng`` then raises :class:`~odp.errors.InvalidParameter`
    (module docstring).

    ``neighbours``: the neighbouring relation of every child and run (module docstring).  Under
    an Accountant its own (another is refused, :class:`~odp.errors.NeighboursMismatch`); under
    a filter the one given, default :attr:`~odp.Neighbours.REPLACE_ONE`.
    """

    name = "concurrent composition"

    def __init__(self, data: Data, budget: AnyFilter | Accountant, *,
                 rng: RandomSource | None = None, name: str | None = None,
                 neighbours: Neighbours | str | None = None):
        super().__init__()
        if name:
            self.name = name
        if isinstance(budget, Accountant):
            self._filter: AnyFilter | None = None
            self._accountant: Accountant | None = budget
        elif isinstance(budget, PrivacyFilter):
            self._filter, self._accountant = budget, None
        else:
            raise InvalidParameter("budget must be an odp.filters filter or an odp.Accountant")
        if self._accountant is not None:
            if rng is not None and rng is not self._accountant.rng:
                raise InvalidParameter(
                    "under an odp.Accountant the children draw from the accountant's rng (its "
                    "ledger marks insecure randomness); do not pass rng= here — create the "
                    "Accountant with it instead, e.g. Accountant(..., rng=SeededRandom(1))")
            self._rng = self._accountant.rng
        else:
            self._rng = rng if rng is not None else SecureRandom()
        #: the neighbouring relation every child and run holds for (module docstring)
        self.neighbours: Neighbours
        if self._accountant is not None:
            self._accountant._check_neighbours(neighbours, f"the composition {self.name!r}")
            self.neighbours = self._accountant.neighbours
        else:
            self.neighbours = (Neighbours.REPLACE_ONE if neighbours is None
                               else Neighbours.parse(neighbours))
        self._data = data
        self._children: list[_Child] = []
        # Children not yet seen closed, by launch index (approximate-zCDP ones also in
        # _open_sequential): kept up to date by close hooks so that a launch costs O(1), not
        # O(children launched so far).
        self._open: dict[int, _Child] = {}
        self._open_sequential: dict[int, _Child] = {}
        self._launch_lock = threading.RLock()

    # ------------------------------------------------------------------ state
    @property
    def budget(self) -> AnyFilter | Accountant:
        if self._filter is not None:
            return self._filter
        assert self._accountant is not None
        return self._accountant

    @property
    def measure(self) -> str:
        return self._filter.measure if self._filter is not None else "odp"

    def children(self) -> list[ChildHandle]:
        with self._launch_lock:
            return [ChildHandle(self, c) for c in self._children]

    def open_children(self) -> list[ChildHandle]:
        with self._launch_lock:
            return [ChildHandle(self, c) for c in list(self._open.values())
                    if not c.queryable.closed]

    def privacy_loss(self) -> FilterLoss | Budget:
        """The parent's odometer (Alg. 6 of Haney et al. 2023): G of the launch costs — the filter's
        privacy_loss, or the accountant's spent budget (open interactive rounds at sup).
        Constant between launches, whatever the children answer."""
        if self._filter is not None:
            return self._filter.privacy_loss()
        assert self._accountant is not None
        return self._accountant.spent

    # ------------------------------------------------------------------ launching
    def _parse_cost(self, mechanism: InteractiveMechanism) -> PrivacyCost:
        """The child's declared cost in the parent's measure, as a vocabulary value."""
        cost = mechanism.cost
        if self._filter is not None:
            acc = self._filter.accumulator
            return acc.to_cost(acc.parse(cost))
        if isinstance(cost, (DP, ODP)):
            return cost
        if isinstance(cost, Budget):
            return DP(cost.epsilon, cost.delta)
        if isinstance(cost, (tuple, list)) and len(cost) == 2:
            return DP(cost[0], cost[1])
        guarantee = getattr(cost, "guarantee", None)
        if isinstance(guarantee, (DP, ODP)):
            return guarantee
        raise InvalidGuarantee(
            f"under an Accountant a child must declare an odp.DP or odp.ODP cost, got {cost!r}")

    def _check_relation(self, what: str, *values: Any) -> None:
        """Refuse, before anything is charged or drawn, a child or a run (``what``) whose
        ``values`` (the mechanism, its cost) state another relation than this composition's
        (:func:`odp.neighbours.stated`; module docstring)."""
        for value in values:
            own = stated(value, what)
            if own is not None and own is not self.neighbours:
                raise mismatch(what, own, self.neighbours,
                               holder="an accountant" if self._accountant is not None
                               else "a composition")

    @staticmethod
    def _needs_sequential(cost: PrivacyCost) -> bool:
        return isinstance(cost, ZCDP) and cost.delta > 0

    def _forget(self, child: _Child) -> None:
        """Close hook of ``child``: it no longer counts as open (dict.pop is atomic)."""
        self._open.pop(child.index, None)
        self._open_sequential.pop(child.index, None)

    def _check_concurrency(self, sequential: bool, what: str) -> None:
        if not self._open_sequential and not (sequential and self._open):
            return  # the common case, O(1)
        # Re-read the flags before refusing (a queryable whose close() bypassed the hook).
        for c in list(self._open.values()):
            if c.queryable.closed:
                self._forget(c)
        open_children = list(self._open.values())
        blocking = list(self._open_sequential.values())
        if blocking:
            raise ConcurrentCompositionRefused(
                f"cannot launch {what}: child #{blocking[0].index} is approximate zCDP (δ > 0), "
                "which has no concurrent composition theorem (Haney et al. 2023, Sec. 4); close it "
                "first.  Nothing was charged.")
        if sequential and open_children:
            raise ConcurrentCompositionRefused(
                f"cannot launch {what}: approximate zCDP (δ > 0) has no concurrent composition "
                f"theorem (Haney et al. 2023, Sec. 4) and {len(open_children)} other child(ren) "
                f"(#{', #'.join(str(c.index) for c in open_children)}) are open; close them "
                "first to compose sequentially.  Nothing was charged.")

    def launch(self, mechanism: InteractiveMechanism) -> ChildHandle:
        """Charge ``mechanism.cost`` (once, for the child's lifetime) and start it on the data.

        Raises :class:`odp.errors.BudgetExceeded` if the filter refuses (nothing charged,
        nothing started) and :class:`ConcurrentCompositionRefused` for approximate zCDP
        launches that would overlap another child."""
        if not isinstance(mechanism, InteractiveMechanism):
            raise InvalidParameter("launch() needs an odp.interactive.InteractiveMechanism")
        if self.closed:
            raise QueryableClosed(f"{self.name} is closed")
        name = getattr(mechanism, "name", type(mechanism).__name__)
        self._check_relation(f"the interactive mechanism {name!r}", mechanism, mechanism.cost)
        cost = self._parse_cost(mechanism)
        sequential = self._needs_sequential(cost)
        with self._launch_lock:
            self._check_concurrency(sequential, name)
            reservation = None
            if self._filter is not None:
                self._filter.charge(cost, what=f"launching {name}")
            else:
                assert self._accountant is not None and isinstance(cost, (DP, ODP))
                reservation = self._accountant.reserve(
                    cost, mechanism=name, params=mechanism.params(), interactive=True,
                    neighbours=self.neighbours)
            try:
                queryable = (mechanism._start_in(self._data, self._rng, self.neighbours)
                             if isinstance(mechanism, SubComposition)
                             else mechanism.start(self._data, self._rng))
                if not isinstance(queryable, Queryable):
                    raise InvalidParameter(f"{name}.start() must return an odp Queryable")
            except BaseException:
                if reservation is not None:
                    reservation.abort("failed")  # charged at sup: noise may be out
                raise  # under a filter the launch stays charged (safe)
            child = _Child(mechanism=mechanism, queryable=queryable, cost=cost, sequential=sequential, reservation=reservation,
                           index=len(self._children) + 1)
            self._children.append(child)
            self._open[child.index] = child
            if sequential:
                self._open_sequential[child.index] = child
            queryable._notify_on_close(lambda: self._forget(child))
            return ChildHandle(self, child)

    def run(self, mechanism: Any) -> Answer:  # Any: an odp mechanism (duck-typed release)
        """Run a non-interactive odp mechanism (a one-query child): charged its declared cost,
        then released on the data.  A wrong public data shape (``check_public``) or a release
        or query that cannot be called as odp calls it is refused first, with nothing charged.
        Under an Accountant this is ``accountant.run`` (Alg. 1, with its ODP settlement)."""
        if self.closed:
            raise QueryableClosed(f"{self.name} is closed")
        release_fn = getattr(mechanism, "release", None)
        if not callable(release_fn):
            raise InvalidParameter("run() needs an odp mechanism with .release(data, rng)")
        name = getattr(mechanism, "name", type(mechanism).__name__)
        # as Accountant.run: a mechanism of another relation is refused before anything else
        self._check_relation(f"the {name} mechanism", mechanism)
        if self._accountant is not None:
            with self._launch_lock:
                self._check_concurrency(False, name)
                return self._accountant.run(mechanism, self._data)
        assert self._filter is not None
        cost = self._filter.parse(mechanism)
        # as Accountant.run: a wrong public shape or a wrong call is refused before the charge
        check_before_release(mechanism, release_fn, self._data, self._rng)
        with self._launch_lock:
            self._check_concurrency(isinstance(cost, ZCDP) and cost.delta > 0, name)
            self._filter.charge(cost, what=f"running {name}")
        return release_fn(self._data, self._rng)

    # ------------------------------------------------------------------ Queryable
    def _answer(self, query: Query) -> Answer:
        if isinstance(query, InteractiveMechanism):
            return self.launch(query)
        if callable(getattr(query, "release", None)):
            return self.run(query)
        raise InvalidParameter(
            "a composition answers InteractiveMechanism (launch) or odp mechanism (run) queries")

    def query(self, query: Query) -> Answer:
        # Not serialised on the queryable lock: launches have their own lock, and children
        # must stay queryable while a launch is in progress elsewhere.
        if self.closed:
            raise QueryableClosed(f"{self.name} is closed")
        answer = self._answer(query)
        with self._qlock:
            self._answered += 1
        return answer

    def _close_child(self, child: _Child) -> Label | None:
        label = child.queryable.close()
        res = child.reservation
        if res is not None and res.open:
            if label is None:
                res.abort(REASON_CLOSED)
            else:
                res.settle_class(label)
        return label

    def _finish(self) -> Label | None:
        for child in list(self._open.values()):
            if not child.queryable.closed:
                self._close_child(child)
        return None


class SubComposition(InteractiveMechanism):
    """A nested composition as a child: its cost is its filter's budget, and inside it the
    analyst launches and runs further mechanisms (paid from that budget, never again at the
    parent).  ``budget`` must be a fresh filter of :mod:`odp.filters`.

    ``neighbours``: the relation of everything inside it — by default (``None``) its parent's,
    which it inherits when launched (module docstring); one given that is not the parent's is
    refused at launch, before anything is charged."""

    name = "sub-composition"

    def __init__(self, budget: AnyFilter, *, name: str | None = None,
                 neighbours: Neighbours | str | None = None):
        if not isinstance(budget, PrivacyFilter) or len(budget):
            raise InvalidParameter("SubComposition needs a fresh odp.filters filter")
        self._budget = budget
        if name:
            self.name = name
        #: the relation stated for it (None: its parent's, inherited at launch)
        self.neighbours: Neighbours | None = (None if neighbours is None
                                              else Neighbours.parse(neighbours))

    @property
    def cost(self) -> CostLike:
        return self._budget.budget

    def params(self) -> dict[str, Any]:  # Any: JSON values
        return {"filter": type(self._budget).__name__, "budget": str(self._budget.budget)}

    def start(self, data: Data, rng: RandomSource) -> ConcurrentComposition:
        """The nested composition, of the relation stated for it (default replace-one); a
        parent composition starts it with its own relation instead (:meth:`_start_in`)."""
        return ConcurrentComposition(data, self._budget, rng=rng, name=self.name,
                                     neighbours=self.neighbours)

    def _start_in(self, data: Data, rng: RandomSource, relation: Neighbours
                  ) -> ConcurrentComposition:
        """:meth:`start` under a parent of ``relation`` (checked to be this one's, if stated,
        before the parent charged anything)."""
        return ConcurrentComposition(data, self._budget, rng=rng, name=self.name,
                                     neighbours=relation)
