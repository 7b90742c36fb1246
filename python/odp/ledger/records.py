"""Ledger rows and the running budget state shared by every ledger backend.

A ledger is an append-only sequence of *events*:

* ``reserve`` — Alg. 1 line 4 passed; the round's worst case (sup_k ℰ(P_k), δ_i) is now held.
  Written, and made durable, *before* the mechanism draws any noise.
* ``settle`` — Alg. 1 lines 7–8: the round is charged ℰ(P_k) for its realised class k (or its
  sup when it failed, was interrupted, or was recovered after a crash).  δ_i stays charged.

The remaining budget counts every unsettled reservation at its sup, so a crash between the two
events can only over-charge, never under-charge.  Rounds are ordered by reservation: that is the
order of Alg. 1 (a round reserved later was chosen without seeing an earlier round's output
unless that output was already settled).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Callable, Sequence, TypeVar

from ..budget import Budget, format_fraction
from ..errors import InvalidGuarantee, LedgerError
from ..guarantees import GuaranteeRecord
from .chain import EventRow, Genesis
from ..types import Label

if TYPE_CHECKING:
    from .lanes import Lane, LaneBook

#: Version of the SQLite ledger's schema (2: hash-chained rows; see :mod:`odp.ledger.schema`).
SCHEMA_VERSION = 2

#: Why a round was settled.
REASON_RELEASED = "released"  # classified release, charged ℰ(P_k)
REASON_FAILED = "failed"  # the mechanism raised after the reservation: charged at sup
REASON_UNCLASSIFIABLE = "unclassifiable"  # the partition failed on the release: sup
REASON_RECOVERED = "recovered"  # found unsettled after its process died: sup
REASON_ABORTED = "aborted"  # the caller gave the reservation up: sup
REASON_OVERLAP = "interactive-overlap"  # interactive round overlapped another reservation: sup
REASON_ENFORCED = "enforcement-mismatch"  # the certified rules disagreed: sup
REASON_CLOSED = "closed"  # an interactive child closed without reporting an ODP class: sup
REASON_LANE = "lane"  # a round charged to a notion lane, in full, before its release
SUP_REASONS = frozenset(
    {REASON_FAILED, REASON_UNCLASSIFIABLE, REASON_RECOVERED, REASON_ABORTED, REASON_OVERLAP,
     REASON_ENFORCED, REASON_CLOSED}
)


@dataclass(frozen=True)
class RoundRequest:
    """What the accountant asks a ledger to admit (Alg. 1 line 4) and reserve."""

    round_id: str
    mechanism: str
    params: dict[str, Any]  # Any: JSON values
    guarantee: GuaranteeRecord  # the declared ODP guarantee (classes and costs)
    sup_epsilon: Fraction
    delta: Fraction
    interactive: bool = False

    @classmethod
    def _of_fields(cls, values: tuple[Any, ...]) -> "RoundRequest":
        """``RoundRequest(*values)``, faster (the accountant makes one per charge): see
        :func:`_frozen_of`."""
        return _frozen_of(cls, _REQUEST_FIELDS, values)


@dataclass(frozen=True)
class RoundRecord:
    """One round of the composition experiment as the ledger knows it."""

    index: int  # 1-based position in reservation order
    round_id: str
    mechanism: str
    params: dict[str, Any]  # Any: JSON values
    guarantee: GuaranteeRecord
    sup_epsilon: Fraction
    delta: Fraction
    interactive: bool
    reserved_at: float
    status: str = "pending"  # "pending" | "settled"
    label: Label | None = None  # realised class once settled; None if charged at sup
    charged: Fraction | None = None  # ε charged once settled
    reason: str | None = None
    settled_at: float | None = None
    reserve_seq: int = 0  # position of the reserve event among all events
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def epsilon_held(self) -> Fraction:
        """ε this round holds now: its charge once settled, its sup while pending."""
        return self.charged if self.charged is not None else self.sup_epsilon

    @property
    def lane(self) -> str | None:
        """The notion lane this round was charged to (:mod:`odp.ledger.lanes`), or None for a
        round of Alg. 1 (the ODP lane, or a ledger without lanes)."""
        return getattr(self.guarantee, "lane", None) or None

    @property
    def refund(self) -> Fraction:
        """sup − charged: the ε saved by ODP accounting (0 while pending)."""
        return self.sup_epsilon - self.charged if self.charged is not None else Fraction(0)

    @classmethod
    def _of_fields(cls, values: tuple[Any, ...]) -> "RoundRecord":
        """``RoundRecord(*values)``, faster (a ledger builds one or two per charge): see
        :func:`_frozen_of`."""
        return _frozen_of(cls, _RECORD_FIELDS, values)

    def settled(self, label: Label | None, charged: Fraction, reason: str, at: float) -> "RoundRecord":
        return RoundRecord._of_fields((self.index, self.round_id, self.mechanism, self.params,
                                       self.guarantee, self.sup_epsilon, self.delta,
                                       self.interactive, self.reserved_at, "settled", label,
                                       charged, reason, at, self.reserve_seq, self.extra))

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "round_id": self.round_id,
            "mechanism": self.mechanism,
            "params": self.params,
            "guarantee": self.guarantee.to_json(),
            "sup_epsilon": str(self.sup_epsilon),
            "delta": str(self.delta),
            "interactive": self.interactive,
            "status": self.status,
            "label": self.label,
            "charged": None if self.charged is None else str(self.charged),
            "reason": self.reason,
            "reserved_at": self.reserved_at,
            "settled_at": self.settled_at,
        }

    def describe(self) -> str:
        if self.lane is not None:
            return (f"#{self.index} {self.mechanism}: lane {self.lane} "
                    f"{self.guarantee.describe()}")  # type: ignore[attr-defined]
        charged = "pending" if self.charged is None else format_fraction(self.charged)
        return (f"#{self.index} {self.mechanism}: sup ε={format_fraction(self.sup_epsilon)} "
                f"δ={format_fraction(self.delta)} charged ε={charged} ({self.reason or 'open'})")


_F = TypeVar("_F")
_T = TypeVar("_T")


def _frozen_of(cls: type[_F], names: tuple[str, ...], values: tuple[Any, ...]) -> _F:
    """``cls(*values)`` for a frozen dataclass whose fields are ``names`` (every field, in
    declaration order), without the dataclass's one ``object.__setattr__`` call per field.
    Only for values already checked."""
    new = object.__new__(cls)
    new.__dict__.update(zip(names, values, strict=True))
    return new


#: The fields of a request and of a record, in declaration order (for ``_of_fields``).
_REQUEST_FIELDS = tuple(f.name for f in fields(RoundRequest))
_RECORD_FIELDS = tuple(f.name for f in fields(RoundRecord))


class BudgetState:
    """Running totals over a ledger's events, applied in event order.

    ``eps_held`` = Σ over rounds of (charge if settled else sup); ``delta_held`` = Σ δ_i.
    Every operation is O(1), so replaying new events after another process wrote is cheap.
    What is kept are Alg. 1's (ε_r, δ_r) = budget − held (``eps_left``, ``delta_left``; not
    clamped at 0), so that admission and the transition check read them without arithmetic.
    """

    __slots__ = ("budget", "eps_left", "delta_left", "rounds", "by_id", "last_reserve_seq",
                 "last_seq", "_held_tree", "_delta_prefix", "_undo", "total", "lanes")

    def __init__(self, budget: Budget, lanes: "LaneBook | Sequence[Lane] | None" = None):
        """``budget``: the ledger's total (ε_t, δ_t).  With ``lanes`` (a laned ledger,
        :mod:`odp.ledger.lanes`) the Alg. 1 state runs on the ODP lane's share — ``budget`` is
        then that share and ``total`` the ledger's — and :attr:`lanes` holds the notion lanes'
        sums."""
        from .lanes import LaneBook

        self.total = budget
        if lanes is not None and not isinstance(lanes, LaneBook):
            lanes = LaneBook(tuple(lanes))
        self.lanes: LaneBook | None = lanes
        if lanes is not None:
            budget = lanes.odp_share
        self.budget = budget
        self.eps_left = budget.epsilon
        self.delta_left = budget.delta
        self.rounds: list[RoundRecord] = []
        self.by_id: dict[str, int] = {}
        self.last_reserve_seq = 0
        self.last_seq = 0
        # For state_before far back (built lazily, see there): a Fenwick tree over the ε the
        # rounds hold (1-based; entry 0 unused) and the prefix sums of their δ.
        self._held_tree: list[Fraction] = [Fraction(0)]
        self._delta_prefix: list[Fraction] = [Fraction(0)]
        # While a batch is being applied (see applying): the settles it made, to undo.
        self._undo: list[tuple[int, RoundRecord]] | None = None

    @property
    def eps_held(self) -> Fraction:
        """Σ over rounds of (charge if settled else sup)."""
        return self.budget.epsilon - self.eps_left

    @property
    def delta_held(self) -> Fraction:
        """Σ over rounds of δ_i."""
        return self.budget.delta - self.delta_left

    @property
    def remaining(self) -> Budget:
        """What is left under Alg. 1's sum rule (0 if a custom admission rule went beyond it)."""
        return Budget._trusted(max(self.eps_left, Fraction(0)), max(self.delta_left, Fraction(0)))

    @property
    def spent(self) -> Budget:
        return Budget._trusted(self.eps_held, self.delta_held)

    def admits(self, sup_epsilon: Fraction, delta: Fraction) -> bool:
        """Alg. 1 line 4 against the remaining budget (pending rounds held at sup)."""
        return sup_epsilon <= self.eps_left and delta <= self.delta_left

    def apply_reserve(self, seq: int, req: RoundRequest, at: float) -> RoundRecord:
        return self.add_reserve(seq, req.round_id, req.mechanism, req.params,
                                guarantee=req.guarantee, sup_epsilon=req.sup_epsilon,
                                delta=req.delta, interactive=req.interactive, at=at)

    @classmethod
    def for_genesis(cls, genesis: Genesis) -> "BudgetState":
        """The empty state of the ledger ``genesis`` starts (with its lanes, if any)."""
        from ..errors import InvalidParameter
        from .lanes import check_lanes, lanes_from_json

        budget = Budget._trusted(genesis.epsilon, genesis.delta)
        if genesis.lanes is None:
            return cls(budget)
        lanes = lanes_from_json(genesis.lanes)
        try:
            check_lanes(lanes, budget)
        except InvalidParameter as exc:
            raise LedgerError(f"the recorded lanes are not a division of the budget: {exc}"
                              ) from None
        return cls(budget, lanes)

    def _charge_lane(self, guarantee: GuaranteeRecord) -> None:
        """A lane round's cost goes to its lane's sums when it is reserved (lane rounds have no
        refund); an ODP round's guarantee is not a :class:`~odp.ledger.lanes.LaneCharge`."""
        if type(guarantee) is not GuaranteeRecord:
            from .lanes import LaneCharge

            if type(guarantee) is LaneCharge:
                if self.lanes is None:
                    raise LedgerError("a lane charge in a ledger without lanes")
                self.lanes.apply(guarantee)

    def add_reserve(self, seq: int, round_id: str, mechanism: str, params: dict[str, Any], *,
                    guarantee: GuaranteeRecord, sup_epsilon: Fraction, delta: Fraction,
                    interactive: bool, at: float) -> RoundRecord:
        """:meth:`apply_reserve` from the fields themselves (no request object)."""
        if round_id in self.by_id:
            raise LedgerError(f"duplicate reservation for round {round_id}")
        self._charge_lane(guarantee)
        rec = RoundRecord._of_fields((len(self.rounds) + 1, round_id, mechanism, params,
                                      guarantee, sup_epsilon, delta, interactive, at, "pending",
                                      None, None, None, None, seq, {}))
        self.by_id[round_id] = len(self.rounds)
        self.rounds.append(rec)
        self.eps_left -= sup_epsilon
        if delta:
            self.delta_left -= delta
        if seq > self.last_reserve_seq:
            self.last_reserve_seq = seq
        if seq > self.last_seq:
            self.last_seq = seq
        return rec

    def apply_settle(self, seq: int, round_id: str, label: Label | None, charged: Fraction, *,
                     reason: str, at: float) -> RoundRecord:
        pos = self.by_id.get(round_id)
        if pos is None:
            raise LedgerError(f"settle event for unknown round {round_id}")
        rec = self.rounds[pos]
        if rec.status != "pending":
            raise LedgerError(f"round {round_id} is settled twice")
        if not (0 <= charged <= rec.sup_epsilon):
            raise LedgerError(f"round {round_id}: charge {charged} outside [0, sup]")
        new = rec.settled(label, charged, reason, at)
        self.rounds[pos] = new
        if self._undo is not None:
            self._undo.append((pos, rec))
        if charged != rec.sup_epsilon:
            self.eps_left += rec.sup_epsilon - charged
            if pos < len(self._held_tree) - 1:  # the tree holds this round: update it
                self._tree_add(pos, charged - rec.sup_epsilon)
        self.last_seq = max(self.last_seq, seq)
        return new

    def apply_charge(self, reserve_seq: int, settle_seq: int, req: RoundRequest,
                     label: Label | None, *, charged: Fraction, reason: str, at: float
                     ) -> RoundRecord:
        """A reserve event immediately followed by its settle (a one-step charge): the same
        state as :meth:`apply_reserve` then :meth:`apply_settle`, with one record built."""
        round_id, sup_epsilon, delta = req.round_id, req.sup_epsilon, req.delta
        by_id, rounds = self.by_id, self.rounds
        if round_id in by_id:
            raise LedgerError(f"duplicate reservation for round {round_id}")
        if not (0 <= charged <= sup_epsilon):
            raise LedgerError(f"round {round_id}: charge {charged} outside [0, sup]")
        self._charge_lane(req.guarantee)
        n = len(rounds)
        rec = RoundRecord._of_fields((n + 1, round_id, req.mechanism, req.params,
                                      req.guarantee, sup_epsilon, delta, req.interactive, at,
                                      "settled", label, charged, reason, at, reserve_seq, {}))
        by_id[round_id] = n
        rounds.append(rec)
        self.eps_left -= charged
        if delta:
            self.delta_left -= delta
        if reserve_seq > self.last_reserve_seq:
            self.last_reserve_seq = reserve_seq
        last = reserve_seq if reserve_seq > settle_seq else settle_seq
        if last > self.last_seq:
            self.last_seq = last
        return rec

    def get(self, round_id: str) -> RoundRecord:
        pos = self.by_id.get(round_id)
        if pos is None:
            raise LedgerError(f"unknown round {round_id}")
        return self.rounds[pos]

    def state_before(self, round_id: str) -> tuple[Fraction, Fraction]:
        """(ε_r, δ_r) of Alg. 1 just before ``round_id``, i.e. the budget minus what the rounds
        reserved earlier hold now (charge, or sup while pending).

        A round settled soon after its reservation has few rounds after it: their holdings are
        added back to what is left (at most :data:`_SHORT_SUFFIX` of them).  Further back, the
        sums come from a Fenwick tree over the rounds' holdings and the prefix sums of their δ,
        extended lazily to the rounds reserved since and updated by each settle: O(log rounds)
        per call, so settling a batch of n reservations costs O(n log n), not O(n²)."""
        pos = self.by_id[round_id]
        rounds = self.rounds
        n = len(rounds)
        if n - pos <= _SHORT_SUFFIX:
            eps, delta = self.eps_left, self.delta_left
            for i in range(pos, n):
                rec = rounds[i]
                eps += rec.epsilon_held
                if rec.delta:
                    delta += rec.delta
            return eps, delta
        self._extend_sums()
        tree, held, i = self._held_tree, Fraction(0), pos
        while i > 0:
            held += tree[i]
            i -= i & -i
        return self.budget.epsilon - held, self.budget.delta - self._delta_prefix[pos]

    def _extend_sums(self) -> None:
        """Bring the Fenwick tree and the δ prefix sums up to every round reserved so far."""
        tree, prefix, rounds = self._held_tree, self._delta_prefix, self.rounds
        for i in range(len(tree), len(rounds) + 1):  # i: the 1-based position of a new round
            rec = rounds[i - 1]
            value, j, stop = rec.epsilon_held, i - 1, i - (i & -i)
            while j > stop:  # tree[i] = its value + the tree entries it covers
                value += tree[j]
                j -= j & -j
            tree.append(value)
            prefix.append(prefix[-1] + rec.delta)

    def _tree_add(self, pos: int, amount: Fraction) -> None:
        tree, i = self._held_tree, pos + 1
        n = len(tree) - 1
        while i <= n:
            tree[i] += amount
            i += i & -i

    # ------------------------------------------------------------------ batches
    def applying(self, fn: Callable[[], _T]) -> _T:
        """Run ``fn``, which applies rows to this state (a batch); if it raises, put the state
        back as it was before it — in O(the rounds it touched), where rebuilding the state would
        replay every row of the ledger — and re-raise."""
        mark = (len(self.rounds), self.eps_left, self.delta_left, self.last_reserve_seq,
                self.last_seq)
        lanes = self.lanes.mark() if self.lanes is not None else None
        self._undo = []
        try:
            result = fn()
        except BaseException:
            self._undo_to(mark)
            if lanes is not None and self.lanes is not None:
                self.lanes.restore(lanes)
            raise
        finally:
            self._undo = None
        return result

    def _undo_to(self, mark: tuple[int, Fraction, Fraction, int, int]) -> None:
        n, self.eps_left, self.delta_left, self.last_reserve_seq, self.last_seq = mark
        undo = self._undo or []
        if not undo and len(self.rounds) == n:
            return  # nothing was applied
        for rec in self.rounds[n:]:
            del self.by_id[rec.round_id]
        rounds = self.rounds[:n]  # a new list: caches keyed on the old one (ODPFilter's
        for pos, old in reversed(undo):  # folds) see that the rounds changed
            if pos < n:  # (a round the batch reserved is gone with it)
                rounds[pos] = old
        self.rounds = rounds
        if undo or len(self._held_tree) > n + 1:  # drop the sums past the mark (settles
            keep = min(n, min((pos for pos, _ in undo), default=n))  # changed them: refold)
            del self._held_tree[keep + 1:]
            del self._delta_prefix[keep + 1:]

    def reserved_after(self, round_id: str) -> bool:
        """Was any other round reserved after ``round_id``? (interactive refund rule)"""
        return self.last_reserve_seq > self.get(round_id).reserve_seq


#: How many rounds reserved after a settled round :meth:`BudgetState.state_before` adds up
#: directly; further back it uses its Fenwick tree.
_SHORT_SUFFIX = 32


#: ``json.dumps(obj, sort_keys=True, separators=(",", ":"))`` builds exactly this encoder on
#: every call (all its other options at their defaults); building it once gives the same text.
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


def dumps(obj: object) -> str:
    """Canonical JSON text (sorted keys, no spaces, ASCII escapes) for ledger columns."""
    return _CANONICAL_JSON.encode(obj)


#: Bound of the small caches below (cleared when full: they only save recomputation).
_CACHE_SIZE = 256
#: Canonical texts of recently recorded guarantees, by identity: ``id → (record, its classes,
#: its delta, its class deltas, text)``.  Only records made of immutable parts are kept (see
#: :func:`guarantee_text`), so a record that is still the same object with the same parts has
#: the same text.
_GUARANTEE_TEXTS: dict[int, tuple[GuaranteeRecord, object, object, object, str]] = {}
#: Canonical texts of recently recorded labels (exact ``str``/``int``: immutable values).
_LABEL_TEXTS: dict[tuple[type, Label], str] = {}
_EXACT_LABEL_TYPES = (str, int)


def _immutable_pairs(pairs: object) -> bool:
    """A tuple of ``(label, Fraction)`` tuples of exact immutable types (nothing in it can
    change, so neither can its JSON text)."""
    return type(pairs) is tuple and all(
        type(p) is tuple and len(p) == 2 and type(p[0]) in _EXACT_LABEL_TYPES
        and type(p[1]) is Fraction for p in pairs)


def guarantee_text(record: GuaranteeRecord) -> str:
    """``dumps(record.to_json())``, remembered for the last few records (an accountant records
    the same guarantee object on every charge of one mechanism).  A record is remembered only
    when it is a plain :class:`GuaranteeRecord` whose classes, delta and class deltas are
    tuples of exact ``str``/``int``/``Fraction`` values; a hit requires the same object with
    the same parts (by identity), so the text is the one :meth:`~GuaranteeRecord.to_json`
    gives."""
    if type(record) is not GuaranteeRecord:
        return dumps(record.to_json())
    classes, delta, class_deltas = record.classes, record.delta, record.class_deltas
    hit = _GUARANTEE_TEXTS.get(id(record))
    if (hit is not None and hit[0] is record and hit[1] is classes and hit[2] is delta
            and hit[3] is class_deltas):
        return hit[4]
    text = dumps(record.to_json())
    if (type(delta) is Fraction and _immutable_pairs(classes)
            and (class_deltas is None or _immutable_pairs(class_deltas))):
        if len(_GUARANTEE_TEXTS) >= _CACHE_SIZE:
            _GUARANTEE_TEXTS.clear()
        _GUARANTEE_TEXTS[id(record)] = (record, classes, delta, class_deltas, text)
    return text


def label_text(label: Label | None) -> str:
    """``dumps(label)``, remembered for labels of exact type ``str`` or ``int``."""
    if label is None:
        return "null"
    t = type(label)
    if t is not str and t is not int:
        return dumps(label)
    key = (t, label)
    text = _LABEL_TEXTS.get(key)
    if text is None:
        text = dumps(label)
        if len(_LABEL_TEXTS) >= _CACHE_SIZE:
            _LABEL_TEXTS.clear()
        _LABEL_TEXTS[key] = text
    return text


def params_text(params: dict[str, Any]) -> str:
    """``dumps(params)`` (``"{}"`` without computing it for an empty dict)."""
    return "{}" if type(params) is dict and not params else dumps(params)


def request_texts(req: RoundRequest) -> tuple[str, str]:
    """A reserve row's JSON columns: ``(dumps(req.params), dumps(req.guarantee.to_json()))``."""
    return params_text(req.params), guarantee_text(req.guarantee)


def _exact(x: Fraction) -> Fraction:
    return x if type(x) is Fraction else Fraction(x)


def reserve_row(seq: int, req: RoundRequest, owner: str | None, at: float, *,
                texts: tuple[str, str] | None = None) -> EventRow:
    """The ledger row that reserves ``req`` (every backend writes exactly these values).
    ``texts`` is :func:`request_texts` of ``req`` if already computed."""
    params, guarantee = texts or request_texts(req)
    return EventRow(seq, "reserve", req.round_id, req.mechanism, params, guarantee,
                    _exact(req.sup_epsilon), _exact(req.delta), 1 if req.interactive else 0,
                    None, None, None, owner, at if type(at) is float else float(at))


def settle_row(seq: int, round_id: str, label: Label | None, charged: Fraction, *,
               reason: str, owner: str | None, at: float) -> EventRow:
    """The ledger row that settles ``round_id``."""
    return EventRow(seq, "settle", round_id, None, None, None, None, None, None,
                    label_text(label), _exact(charged), reason, owner,
                    at if type(at) is float else float(at))


def apply_row(state: BudgetState, row: EventRow) -> RoundRecord:
    """Apply one (verified) ledger row to ``state``.  ``ValueError``/``LedgerError`` when the
    row is not a well-formed reserve or settle event."""
    if row.kind == "reserve":
        if (row.mechanism is None or row.params is None or row.guarantee is None
                or row.sup_epsilon is None or row.delta is None or row.interactive is None):
            raise ValueError("a reserve row lacks a value")
        params, guarantee = json.loads(row.params), json.loads(row.guarantee)
        if type(params) is not dict or type(guarantee) is not dict:
            raise ValueError("params and guarantee must be JSON objects")
        try:
            if guarantee.get("type") == "lane":
                from .lanes import LaneCharge

                record: GuaranteeRecord = LaneCharge.from_json(guarantee)
            else:
                record = GuaranteeRecord.from_json(guarantee)
        except InvalidGuarantee as exc:
            raise ValueError(f"the recorded guarantee is malformed: {exc}") from None
        rec = state.add_reserve(row.seq, row.round_id, row.mechanism, params,
                                guarantee=record, sup_epsilon=row.sup_epsilon, delta=row.delta,
                                interactive=bool(row.interactive), at=row.created)
        if row.owner:
            rec.extra["owner"] = row.owner
        return rec
    if row.label is None or row.charged is None or row.reason is None:
        raise ValueError("a settle row lacks a value")
    return state.apply_settle(row.seq, row.round_id, json.loads(row.label), row.charged,
                              reason=row.reason, at=row.created)
