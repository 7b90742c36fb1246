"""The ledger interface and the in-memory ledger."""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence, TypeAlias, TypeVar

from ..budget import Budget, float_hint, format_fraction
from ..errors import (BudgetExceeded, CertificateError, InvalidGuarantee, InvalidParameter,
                      LedgerError)
from ..guarantees import GuaranteeRecord
from ..neighbours import Neighbours
from .chain import ChainHead, ChainVerifier, EventRow, Genesis
from .lanes import LaneCharge, is_lane_charge, lanes_json
from .records import (
    REASON_ENFORCED,
    REASON_LANE,
    REASON_OVERLAP,
    REASON_RELEASED,
    BudgetState,
    RoundRecord,
    RoundRequest,
    reserve_row,
    settle_row,
)
from ..types import Label


#: An admission rule: ``admit(state, request) -> bool`` decides Alg. 1 line 4 (or, in general,
#: the CONT/HALT of a privacy filter, Alg. 6 line 4) from the ledger's up-to-date state, with
#: pending rounds held at their sup.  It runs inside the ledger's lock (atomically with the
#: reservation) and must not write anything.  ``None`` means the sum rule of Alg. 1.
Admission = Callable[[BudgetState, RoundRequest], bool]


#: A transition check: ``check(eps_r, delta_r, sup_epsilon, charged, delta, blocks, realized,
#: *, mechanism, params) -> bool`` is called before a settle is committed, with (ε_r, δ_r) the
#: Alg. 1 state just before the round, ``blocks`` the declared class costs and ``realized`` the
#: index of the realised class (both None when the round is charged its sup without a class),
#: and the round's recorded mechanism name and parameters (for a built-in mechanism the check
#: includes its ``mech`` row: the declared classes, costs and δ must be the Lean cost function
#: of those parameters, :mod:`odp.certs.mechanisms`).  It re-checks the transition with
#: independent rules (the checker generated from the Lean rules, or the Lean checker itself).  On ``False`` the round is charged its sup instead (reason
#: ``enforcement-mismatch``) and the ledger raises :class:`~odp.errors.CertificateError`.
TransitionCheck = Callable[..., bool]

#: A settle in a batch (:meth:`Ledger.settle_many`): ``(round_id, label, charged, reason)``.
SettleItem: TypeAlias = tuple[str, Label | None, Fraction, str]
#: Records one decided settle: ``(round_id, label, charged, reason) -> RoundRecord``.
SettleAppend: TypeAlias = Callable[[str, Label | None, Fraction, str], RoundRecord]

#: A charge in a batch (:meth:`Ledger.charge_many`): ``(request, label, charged)``.
ChargeItem: TypeAlias = tuple[RoundRequest, Label | None, Fraction]

_T = TypeVar("_T")

if TYPE_CHECKING:
    from .lanes import Lane


def recorded_neighbours(genesis: Genesis, where: str) -> Neighbours:
    """The neighbouring relation a ledger's genesis records (:mod:`odp.neighbours`); none
    recorded (a ledger made before odp recorded it) is replace-one.  A relation this odp does
    not know is a :class:`~odp.errors.LedgerError` (the genesis hash binds it: it was written by
    another odp)."""
    try:
        return Neighbours.of_record(genesis.neighbours)
    except InvalidParameter:
        raise LedgerError(f"{where} records the neighbouring relation {genesis.neighbours!r}, "
                          "which this odp does not know (written by a newer odp?)") from None


def check_same_neighbours(have: Neighbours, want: Neighbours | str | None, where: str) -> None:
    """An existing ledger opened with ``neighbours=`` must hold rounds of that relation
    (``None``: whichever it records)."""
    if want is None:
        return
    wanted = Neighbours.parse(want)
    if wanted is not have:
        raise LedgerError(
            f"{where} holds rounds for {have} neighbours, not {wanted} (the relation given): "
            "one ledger composes guarantees for one neighbouring relation (Theorem 7), so it "
            "was not opened and nothing was written; open it without neighbours= (or with "
            f"{have!s}) to continue it, or use another ledger for {wanted} rounds")


def new_neighbours(want: Neighbours | str | None) -> str:
    """The relation a new ledger records: the one given, or replace-one (odp's built-in
    mechanisms')."""
    return (Neighbours.REPLACE_ONE if want is None else Neighbours.parse(want)).value


def realised_blocks(guarantee: GuaranteeRecord, label: Label | None
                    ) -> tuple[list[Fraction] | None, int | None]:
    """The declared class costs and the index of ``label`` among them (Lemma 4 row), or
    ``(None, None)`` when no class is named."""
    if label is None:
        return None, None
    index = guarantee.index_of(label)
    if index is None:
        return None, None
    return list(guarantee.costs), index


def sum_rule(state: BudgetState, req: RoundRequest) -> bool:
    """Alg. 1 line 4: sup ε ≤ ε_r and δ_i ≤ δ_r (the sum filter of Alg. 6, App. A).  A round
    charged to a notion lane (:class:`~odp.ledger.lanes.LaneCharge`) is admitted by its lane's
    rule instead (:meth:`~odp.ledger.lanes.LaneBook.admits`)."""
    if type(req.guarantee) is not GuaranteeRecord and is_lane_charge(req.guarantee):
        if state.lanes is None:
            raise LedgerError("a lane charge to a ledger without lanes")
        return state.lanes.admits(req.guarantee)  # type: ignore[arg-type]
    return state.admits(req.sup_epsilon, req.delta)


def lane_exceeded(state: BudgetState, req: RoundRequest) -> BudgetExceeded:
    """The refusal of a lane round: its lane's rule does not admit it (nothing recorded)."""
    charge = req.guarantee
    assert state.lanes is not None and isinstance(charge, LaneCharge)
    lane = state.lanes.lane_of(charge)
    spent = state.lanes.spent[lane.name]
    sums = ", ".join(f"{format_fraction(s)} of {format_fraction(b)}"
                     for s, b in zip(spent, lane.budget))
    rule = "no order would stay within its budget" if lane.some_fit else "it would exceed"
    return BudgetExceeded(
        f"{req.mechanism} ({charge.describe()}) does not fit lane {lane.name!r} ({lane.notion}): "
        f"{rule} (spent {sums}); nothing was drawn or recorded",
        requested=None, remaining=None)


def budget_exceeded(state: BudgetState, req: RoundRequest,
                    admit: Admission | None = None) -> BudgetExceeded:
    if is_lane_charge(req.guarantee) and state.lanes is not None:
        return lane_exceeded(state, req)
    rem = state.remaining
    if admit is not None:
        name = getattr(admit, "__name__", type(admit).__name__)
        return BudgetExceeded(
            f"the admission rule {name} refused {req.mechanism} (sup ε="
            f"{format_fraction(req.sup_epsilon)}, δ={format_fraction(req.delta)}) after "
            f"{len(state.rounds)} rounds; nothing was drawn or recorded",
            requested=Budget._trusted(req.sup_epsilon, req.delta),
            remaining=rem,
        )
    # name only the rule that refused (Alg. 1 line 4); "worst case" only where there is more
    # than one class, i.e. where the charge after the release may be smaller
    worst = " (its worst case over its output classes)" if len(req.guarantee.classes) > 1 else ""
    hint = float_hint(req.sup_epsilon)  # the float warning was given once, maybe long ago
    return BudgetExceeded(
        f"{req.mechanism} needs ε={format_fraction(req.sup_epsilon)}{worst} and "
        f"δ={format_fraction(req.delta)}, but only ε={format_fraction(rem.epsilon)}, "
        f"δ={format_fraction(rem.delta)} remain of {state.budget} (Alg. 1 line 4 refuses it); "
        "nothing was drawn or recorded" + (f"; {hint}" if hint else ""),
        requested=Budget._trusted(req.sup_epsilon, req.delta),
        remaining=rem,
    )


def validate_charge(guarantee: GuaranteeRecord, sup_epsilon: Fraction, label: Label | None,
                    charged: Fraction) -> tuple[list[Fraction] | None, int | None]:
    """A settle must charge exactly what the declared guarantee says: the cost ℰ(P_k) of the
    realised class ``label`` (Alg. 1 line 7), or the sup when no class is named (a failed,
    abandoned or recovered round).  Checked before anything is written.  Returns
    :func:`realised_blocks` (so a caller need not search the classes twice)."""
    if label is None:
        if charged != sup_epsilon:
            raise InvalidGuarantee(
                f"a round settled without a realised class must be charged its sup "
                f"{format_fraction(sup_epsilon)}, not {charged}")
        return None, None
    costs, index = realised_blocks(guarantee, label)
    if costs is None or index is None:
        raise InvalidGuarantee(f"{label!r} is not a class of the declared guarantee")
    if charged != costs[index]:
        raise InvalidGuarantee(
            f"class {label!r} costs {format_fraction(costs[index])} in the declared guarantee, "
            f"not {charged}")
    return costs, index


def settlement(state: BudgetState, round_id: str, label: Label | None, charged: Fraction, *,
               reason: str, interactive_rule: bool, check: TransitionCheck | None
               ) -> tuple[Label | None, Fraction, str, bool]:
    """Decide what a settle records: (label, charged, reason, check_failed).  Pure: it only
    reads ``state``, in which ``round_id`` is reserved and pending."""
    rec = state.get(round_id)
    if rec.status != "pending":
        raise LedgerError(f"round {round_id} is already settled ({rec.reason})")
    if interactive_rule and rec.interactive and state.reserved_after(round_id):
        return None, rec.sup_epsilon, REASON_OVERLAP, False
    validate_charge(rec.guarantee, rec.sup_epsilon, label, charged)
    if check is not None and not is_lane_charge(rec.guarantee):  # lane rounds: at reservation
        eps_r, delta_r = state.state_before(round_id)
        blocks, realized = realised_blocks(rec.guarantee, label)
        if not check(eps_r, delta_r, rec.sup_epsilon, charged, rec.delta, blocks, realized,
                     mechanism=rec.mechanism, params=rec.params):
            return None, rec.sup_epsilon, REASON_ENFORCED, True
    return label, charged, reason, False


def check_lane(state: BudgetState, req: RoundRequest, check: TransitionCheck | None) -> None:
    """With a transition check on, re-check a lane round's admission with the rules generated
    from ``Odp/LedgerCore.lean`` before anything is written (:func:`odp.certs.enforce.
    generated_lane_check`); a disagreement raises :class:`CertificateError` and records nothing
    (no noise has been drawn: lane rounds are charged before their release)."""
    if check is None or not is_lane_charge(req.guarantee):
        return
    from ..certs.enforce import generated_lane_check

    assert state.lanes is not None and isinstance(req.guarantee, LaneCharge)
    if not generated_lane_check(state.lanes, req.guarantee):
        raise CertificateError(
            f"round {req.round_id}: the certified lane rules disagree with the accountant's "
            "lane admission; nothing was recorded — please report this as a bug")


def reserve_each(state: BudgetState, reqs: Iterable[RoundRequest], admit: Admission | None,
                 append: Callable[[RoundRequest], RoundRecord]) -> list[RoundRecord]:
    """Group reservation: admit each request against ``state`` as left by the ones before it
    (``append`` records one and updates ``state``); :class:`BudgetExceeded` for the first
    refused, and the caller records none."""
    out = []
    for req in reqs:
        if not (admit or sum_rule)(state, req):
            raise budget_exceeded(state, req, admit)
        out.append(append(req))
    return out


def settle_each(state: BudgetState, items: Iterable[SettleItem], append: SettleAppend, *,
                interactive_rule: bool, check: TransitionCheck | None,
                failed: list[str]) -> list[RoundRecord]:
    """Group settlement: decide each ``(round_id, label, charged, reason)`` by
    :func:`settlement` against ``state`` as left by the ones before it and record it with
    ``append(round_id, label, charged, reason)``; the rounds the transition check refused
    (charged their sup) are added to ``failed``."""
    out = []
    for round_id, label, charged, reason in items:
        lab, chg, why, bad = settlement(state, round_id, label, charged, reason=reason,
                                        interactive_rule=interactive_rule, check=check)
        if bad:
            failed.append(round_id)
        out.append(append(round_id, lab, chg, why))
    return out


def enforcement_error(round_id: str) -> CertificateError:
    return CertificateError(
        f"round {round_id}: the certified rules disagree with the accountant's transition; the "
        "round was charged its sup (reason 'enforcement-mismatch') — do not publish its release "
        "and please report this as a bug"
    )


class Ledger(ABC):
    """Durable record of the composition experiment (Alg. 1) for one total budget.

    Implementations make :meth:`reserve` atomic with the admission check (Alg. 1 line 4), so
    several accountants — threads or processes — can share one budget without over-spending.
    """

    @property
    @abstractmethod
    def budget(self) -> Budget:
        """The total budget (ε_t, δ_t)."""

    @abstractmethod
    def reserve(self, req: RoundRequest, admit: Admission | None = None) -> RoundRecord:
        """Admit ``req`` (by default sup ε ≤ ε_r and δ_i ≤ δ_r, pending rounds held at sup) and
        durably record the reservation; raise :class:`BudgetExceeded` and record nothing
        otherwise.  ``admit`` replaces the default rule (see :data:`Admission`)."""

    @abstractmethod
    def settle(self, round_id: str, label: Label | None, charged: Fraction, reason: str = REASON_RELEASED,
               *, interactive_rule: bool = True, check: TransitionCheck | None = None
               ) -> RoundRecord:
        """Charge a reserved round (Alg. 1 lines 7–8).  With ``interactive_rule`` an interactive
        round that another reservation overlapped is charged its sup instead (a refund is
        sound only for a sequential run of Alg. 1; see :mod:`odp.accountant`).
        ``check`` re-checks the transition before it is committed (see :data:`TransitionCheck`)."""

    @abstractmethod
    def charge(self, req: RoundRequest, label: Label | None, charged: Fraction,
               admit: Admission | None = None, *, check: TransitionCheck | None = None
               ) -> RoundRecord:
        """Reserve and settle in one atomic step (the release already exists)."""

    def reserve_many(self, reqs: Iterable[RoundRequest], admit: Admission | None = None
                     ) -> list[RoundRecord]:
        """Reserve several rounds at once (group commit: one durable commit for all), each
        admitted against the state including the ones before it; all or none."""
        raise LedgerError(f"{type(self).__name__} does not support batches")

    def settle_many(self, items: Iterable[SettleItem], *, interactive_rule: bool = True,
                    check: TransitionCheck | None = None) -> list[RoundRecord]:
        """Settle several rounds — ``(round_id, label, charged, reason)`` each — at once."""
        raise LedgerError(f"{type(self).__name__} does not support batches")

    def charge_many(self, items: Iterable[ChargeItem], admit: Admission | None = None,
                    check: TransitionCheck | None = None) -> list[RoundRecord]:
        """Charge several releases — ``(request, label, charged)`` each — at once; all or
        none."""
        raise LedgerError(f"{type(self).__name__} does not support batches")

    @abstractmethod
    def snapshot(self) -> BudgetState:
        """Up-to-date totals and rounds (re-reads what other processes wrote)."""

    @property
    def lanes(self) -> tuple[Lane, ...] | None:
        """The ledger's lanes (:mod:`odp.ledger.lanes`), or None for a ledger without lanes
        (one Alg. 1 budget)."""
        book = self.snapshot().lanes
        return None if book is None else book.lanes

    @property
    def neighbours(self) -> Neighbours:
        """The neighbouring relation every round of this ledger holds for
        (:mod:`odp.neighbours`), fixed when it was made and bound by its genesis hash; a ledger
        made before odp recorded it is replace-one (:attr:`neighbours_recorded` is then
        False)."""
        return recorded_neighbours(self.genesis, "the ledger")

    @property
    def neighbours_recorded(self) -> bool:
        """Whether the ledger records its relation (every ledger made since odp records it)."""
        return self.genesis.neighbours is not None

    @property
    def remaining(self) -> Budget:
        return self.snapshot().remaining

    @property
    def spent(self) -> Budget:
        return self.snapshot().spent

    def rounds(self) -> list[RoundRecord]:
        return list(self.snapshot().rounds)

    #: Where the chain starts (identity, budget, key id); see :mod:`odp.ledger.chain`.
    genesis: Genesis
    #: The ledger's identity (``genesis.ledger_id``).
    ledger_id: str

    @property
    @abstractmethod
    def chain_head(self) -> ChainHead:
        """Rows, rounds and the hash of the last row (verified)."""

    @abstractmethod
    def events(self) -> list[tuple[EventRow, str]]:
        """Every row, in order, with its verified hash (what a certificate records)."""

    def flush(self) -> None:
        """Make every row committed through this ledger durable (a no-op where every commit
        already is; the SQLite ledger flushes its settles lazily, see :class:`SQLiteLedger`)."""

    def close(self) -> None:
        """Release resources (no-op for the in-memory ledger)."""

    def __enter__(self) -> "Ledger":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class MemoryLedger(Ledger):
    """A ledger kept in memory (notebooks and tests).  Thread-safe; not durable."""

    def __init__(self, budget: Budget, lanes: Sequence[Lane] | None = None,
                 neighbours: Neighbours | str | None = None):
        """``neighbours``: the relation of its rounds (:mod:`odp.neighbours`; default
        replace-one), recorded in its genesis like a file ledger's."""
        import uuid

        self._state = BudgetState(budget, lanes)
        self._lock = threading.Lock()
        self.ledger_id = uuid.uuid4().hex
        self.genesis = Genesis(self.ledger_id, budget.epsilon, budget.delta,
                               lanes=None if lanes is None else lanes_json(lanes),
                               neighbours=new_neighbours(neighbours))
        self._chain = ChainVerifier(self.genesis, where="in-memory ledger")
        # Rows not hashed yet, as the arguments of reserve_row / settle_row (one tuple per
        # write, not a closure: fewer objects for the garbage collector to scan per charge).
        self._pending: list[tuple[Any, ...]] = []
        self._events: list[tuple[EventRow, str]] = []
        self._rows = 0

    @property
    def budget(self) -> Budget:
        return self._state.total

    def _next_seq(self) -> int:
        self._rows += 1
        return self._rows

    def _reserve(self, req: RoundRequest, now: float) -> RoundRecord:
        seq = self._next_seq()
        rec = self._state.apply_reserve(seq, req, now)  # refuses before changing anything
        self._pending.append(("reserve", seq, req, now))
        return rec

    def _settle(self, round_id: str, label: Label | None, charged: Fraction, reason: str, *,
                now: float) -> RoundRecord:
        seq = self._next_seq()
        rec = self._state.apply_settle(seq, round_id, label, charged, reason=reason, at=now)
        self._pending.append(("settle", seq, round_id, label, charged, reason, now))
        return rec

    def _hash_pending(self) -> None:
        """Chain the rows written since the last call: the same rows and hashes a durable
        backend would write (computed lazily, off the charging path).  Caller holds _lock."""
        events, check = self._events, self._chain.check
        for item in self._pending:
            if item[0] == "reserve":
                _, seq, req, now = item
                rows = [reserve_row(seq, req, None, now)]
            elif item[0] == "settle":
                _, seq, round_id, label, charged, reason, now = item
                rows = [settle_row(seq, round_id, label, charged, reason=reason, owner=None,
                                   at=now)]
            else:  # a one-step charge: its reserve row, then its settle row
                _, seq, settle_seq, req, label, charged, reason, now = item
                rows = [reserve_row(seq, req, None, now),
                        settle_row(settle_seq, req.round_id, label, charged, reason=reason,
                                   owner=None, at=now)]
            for row in rows:
                events.append((row, check(row, None, None)))
        self._pending.clear()

    def reserve(self, req: RoundRequest, admit: Admission | None = None) -> RoundRecord:
        with self._lock:
            if not (admit or sum_rule)(self._state, req):
                raise budget_exceeded(self._state, req, admit)
            return self._reserve(req, time.time())

    def settle(self, round_id: str, label: Label | None, charged: Fraction, reason: str = REASON_RELEASED,
               *, interactive_rule: bool = True, check: TransitionCheck | None = None
               ) -> RoundRecord:
        with self._lock:
            label, charged, reason, failed = settlement(
                self._state, round_id, label, charged, reason=reason,
                interactive_rule=interactive_rule, check=check)
            rec = self._settle(round_id, label, charged, reason, now=time.time())
        if failed:
            raise enforcement_error(round_id)
        return rec

    def charge(self, req: RoundRequest, label: Label | None, charged: Fraction,
               admit: Admission | None = None, *, check: TransitionCheck | None = None
               ) -> RoundRecord:
        blocks, realized = validate_charge(req.guarantee, req.sup_epsilon, label, charged)
        with self._lock:
            rec, failed = self._charge_locked(req, label, charged, admit=admit, check=check,
                                              blocks=blocks, realized=realized,
                                              now=time.time())
        if failed:
            raise enforcement_error(req.round_id)
        return rec

    def _charge_locked(self, req: RoundRequest, label: Label | None, charged: Fraction, *,
                       admit: Admission | None, check: TransitionCheck | None,
                       blocks: list[Fraction] | None, realized: int | None, now: float
                       ) -> tuple[RoundRecord, bool]:
        reason, failed = REASON_RELEASED, False
        state = self._state
        if not (admit or sum_rule)(state, req):
            raise budget_exceeded(state, req, admit)
        if is_lane_charge(req.guarantee):
            check_lane(state, req, check)
            reason, check = REASON_LANE, None
        if check is not None:  # (ε_r, δ_r) before the round = what is left before reserving
            eps_r, delta_r = state.eps_left, state.delta_left
            if not check(eps_r, delta_r, req.sup_epsilon, charged, req.delta, blocks, realized,
                         mechanism=req.mechanism, params=req.params):
                label, charged, reason, failed = None, req.sup_epsilon, REASON_ENFORCED, True
        reserve_seq, settle_seq = self._next_seq(), self._next_seq()
        rec = state.apply_charge(reserve_seq, settle_seq, req, label, charged=charged,
                                 reason=reason, at=now)
        self._pending.append(("charge", reserve_seq, settle_seq, req, label, charged, reason, now))
        return rec, failed

    def _all_or_nothing(self, fn: Callable[[], _T]) -> _T:
        """Run ``fn`` under the lock; if it fails after changing the state, undo what it
        changed (O(its rounds): :meth:`BudgetState.applying`)."""
        with self._lock:
            rows, pending = self._rows, len(self._pending)
            try:
                return self._state.applying(fn)
            except BaseException:
                del self._pending[pending:]
                self._rows = rows
                raise

    def reserve_many(self, reqs: Iterable[RoundRequest], admit: Admission | None = None
                     ) -> list[RoundRecord]:
        reqs = list(reqs)

        def run() -> list[RoundRecord]:
            now = time.time()
            return reserve_each(self._state, reqs, admit, lambda req: self._reserve(req, now))

        return self._all_or_nothing(run)

    def settle_many(self, items: Iterable[SettleItem], *, interactive_rule: bool = True,
                    check: TransitionCheck | None = None) -> list[RoundRecord]:
        batch = list(items)
        failed: list[str] = []

        def run() -> list[RoundRecord]:
            now = time.time()
            return settle_each(
                self._state, batch,
                lambda round_id, lab, chg, why: self._settle(round_id, lab, chg, why, now=now),
                interactive_rule=interactive_rule, check=check, failed=failed)

        recs = self._all_or_nothing(run)
        if failed:
            raise enforcement_error(failed[0])
        return recs

    def charge_many(self, items: Iterable[ChargeItem], admit: Admission | None = None,
                    check: TransitionCheck | None = None) -> list[RoundRecord]:
        batch = list(items)
        checked = [validate_charge(req.guarantee, req.sup_epsilon, label, charged)
                   for req, label, charged in batch]
        failed: list[str] = []

        def run() -> list[RoundRecord]:
            now, out = time.time(), []
            for (req, label, charged), (blocks, realized) in zip(batch, checked):
                rec, bad = self._charge_locked(req, label, charged, admit=admit, check=check,
                                               blocks=blocks, realized=realized, now=now)
                if bad:
                    failed.append(req.round_id)
                out.append(rec)
            return out

        recs = self._all_or_nothing(run)
        if failed:
            raise enforcement_error(failed[0])
        return recs

    def snapshot(self) -> BudgetState:
        return self._state

    @property
    def chain_head(self) -> ChainHead:
        with self._lock:
            self._hash_pending()
            return ChainHead(**self._chain.state.to_json())

    def events(self) -> list[tuple[EventRow, str]]:
        with self._lock:
            self._hash_pending()
            return list(self._events)

    def rounds(self) -> list[RoundRecord]:
        with self._lock:
            return list(self._state.rounds)
