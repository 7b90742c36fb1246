"""What every durable, hash-chained ledger backend does the same way (SQLite, PostgreSQL).

A backend stores rows; this mixin decides *which* rows: admission (Alg. 1 line 4), the
reserve → settle protocol (Alg. 1 lines 4–8), the transition check, recovery at sup, and the
chain (:mod:`odp.ledger.chain`).  Because both backends build their rows, hashes and in-memory
state here, from the same values, they hold the same chain byte for byte.

A backend provides ``_write(op)``: inside one exclusive transaction it reads the rows other
processes committed (``_refresh``), runs ``op`` — which appends rows with :meth:`_append_*`
(each row is hashed and applied to the in-memory state at once, so later requests in the same
transaction are admitted against it) — stores ``self._batch`` and commits.  If anything fails
in ``op``, :meth:`_run_op` undoes what it applied in memory; if the INSERT or COMMIT fails after
it, the backend calls :meth:`_reload` (the in-memory state is rebuilt from what is committed), so
a failed call never leaves a trace.

Group commit: :meth:`reserve_many`, :meth:`settle_many` and :meth:`charge_many` write several
rounds in one transaction — one durable commit for all of them, each reservation durable
before the caller draws its noise.  A batch is all or nothing.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence, TypeAlias, TypeVar

from ..budget import Budget
from ..errors import LedgerCorrupted, LedgerError
from .base import (
    Admission,
    ChargeItem,
    Ledger,
    SettleItem,
    TransitionCheck,
    budget_exceeded,
    check_lane,
    enforcement_error,
    realised_blocks,
    reserve_each,
    settle_each,
    settlement,
    sum_rule,
    validate_charge,
)
from .chain import ChainHead, ChainVerifier, EventRow, row_mac
from .lanes import Lane, is_lane_charge
from .records import (
    REASON_ENFORCED,
    REASON_LANE,
    REASON_RECOVERED,
    REASON_RELEASED,
    BudgetState,
    RoundRecord,
    RoundRequest,
    apply_row,
    request_texts,
    reserve_row,
    settle_row,
)
from ..types import Label

#: The most rounds one batch call may write (a batch is one transaction held by one writer).
MAX_BATCH = 10_000

#: A row appended in the current transaction, as the backend stores it:
#: (row, previous row's hash, its hash, its HMAC tag or None).
BatchRow: TypeAlias = tuple[EventRow, str, str, str | None]

#: A row as a backend reads it (the row columns, then the chain columns).  Any: the values as
#: the database driver returns them, untrusted until :meth:`EventRow.from_stored` parses them.
StoredRow: TypeAlias = tuple[Any, ...]

_T = TypeVar("_T")


class ChainedLedger(Ledger):
    """Shared write logic of the SQL ledgers (see the module docstring).

    Attributes a backend sets: ``_state`` (:class:`BudgetState`), ``_verifier``
    (:class:`ChainVerifier`), ``_key``, ``_owner`` (canonical JSON of the owner token),
    ``_clock`` (timestamps), ``genesis``, ``_budget``, ``_where`` (a name safe to print)."""

    _state: BudgetState
    _verifier: ChainVerifier
    _key: bytes | None
    _owner: str
    _clock: Callable[[], float]
    _budget: Budget
    _where: str
    _lock: threading.Lock
    _readonly: bool
    #: Head files extended after every commit (none for a server ledger).
    _heads: list[Path]
    #: The stored schema version.
    schema_version: int
    #: Whether the ledger was read from a private copy (a read-only SQLite file).
    snapshot_copy: bool
    #: The rows appended in the current write transaction (None outside one).
    _batch: list[BatchRow] | None = None

    # ------------------------------------------------------------------ backend hooks
    def _write(self, op: Callable[[], _T], what: str = "write",
               rounds: Sequence[str] = (), *, durable: bool = True
               ) -> _T:  # pragma: no cover - abstract
        """Run ``op`` in one exclusive transaction and commit the rows it appended.  ``what``
        and ``rounds`` name the call and the rounds it settles, for error messages.
        ``durable=False`` (settles only) allows returning before the commit is on disk: losing
        a settle leaves its round reserved, recovered at its worst case, never less."""
        raise NotImplementedError

    def _refresh(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _dead_owner_rounds(self) -> list[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _hash_at(self, n: int) -> str | None:  # pragma: no cover - abstract
        """The verified hash of row ``n`` (the genesis hash for 0); None past the end."""
        raise NotImplementedError

    @property
    def chained(self) -> bool:  # pragma: no cover - abstract
        """Whether the stored rows carry their hashes."""
        raise NotImplementedError

    @property
    def mac_checked(self) -> bool:
        """Whether HMAC tags were verified (the ledger is keyed and its key was given)."""
        return self._verifier.key is not None

    # ------------------------------------------------------------------ state
    def _reload(self) -> None:
        """Rebuild the in-memory state and chain from the committed rows (after a failed
        transaction that had already appended rows in memory).  Caller holds _lock."""
        self._state = BudgetState.for_genesis(self.genesis)
        self._verifier = ChainVerifier(self.genesis, self._verifier.key, self._where)
        self._refresh()

    def _run_op(self, op: Callable[[], _T]) -> _T:
        """Run a write's ``op`` inside the backend's transaction, after its refresh.  If it
        raises (a batch refused part-way, a rule check), what it applied in memory — rounds and
        settles (:meth:`BudgetState.applying`), the chain — is undone in O(its rows), instead of
        replaying the whole ledger."""
        head = self._verifier.state
        try:
            return self._state.applying(op)
        except BaseException:
            self._verifier.state = head
            raise

    def _apply_stored_row(self, row: EventRow, prev: str | None, digest: str | None,
                          mac: str | None) -> RoundRecord:
        self._verifier.check(row, prev, digest, mac)
        try:
            return apply_row(self._state, row)
        except (ValueError, TypeError, KeyError, LedgerError) as exc:
            raise self._verifier.corrupted(row.seq, f"not a valid transition ({exc})") from None

    @property
    def budget(self) -> Budget:
        return self._budget

    @property
    def lanes_spec(self) -> tuple[Lane, ...] | None:
        """The ledger's lanes as recorded (without refreshing; :attr:`lanes` refreshes)."""
        book = self._state.lanes
        return None if book is None else book.lanes

    @property
    def lanes(self) -> tuple[Lane, ...] | None:
        return self.lanes_spec  # fixed when the ledger was made: no refresh needed

    @property
    def chain_head(self) -> ChainHead:
        with self._lock:
            self._refresh()
            return ChainHead(**self._verifier.state.to_json())

    def snapshot(self) -> BudgetState:
        with self._lock:
            self._refresh()
            return self._state

    def rounds(self) -> list[RoundRecord]:
        with self._lock:
            self._refresh()
            return list(self._state.rounds)

    # ------------------------------------------------------------------ appending rows
    def _append(self, row: EventRow) -> None:
        """Hash ``row`` onto the chain and queue it for the current transaction."""
        batch = self._batch
        if batch is None:  # pragma: no cover - a bug in a backend, not bad input
            raise LedgerError(f"{self._where}: a row was appended outside a write transaction")
        verifier = self._verifier
        prev = verifier.state.head
        digest = verifier.append(row)
        key = verifier.key  # the ledger's key when it is keyed, else None
        mac = row_mac(key, digest) if key is not None else None
        batch.append((row, prev, digest, mac))

    def _next_seq(self) -> int:
        return self._verifier.state.rows + 1

    def _append_reserve(self, req: RoundRequest, now: float,
                        texts: tuple[str, str] | None = None) -> RoundRecord:
        seq = self._next_seq()
        rec = self._state.apply_reserve(seq, req, now)  # refuses a duplicate before hashing
        rec.extra["owner"] = self._owner
        self._append(reserve_row(seq, req, self._owner, now, texts=texts))
        return rec

    def _append_settle(self, round_id: str, label: Label | None, charged: Fraction,
                       reason: str, *, now: float) -> RoundRecord:
        seq = self._next_seq()
        rec = self._state.apply_settle(seq, round_id, label, charged, reason=reason, at=now)
        self._append(settle_row(seq, round_id, label, charged, reason=reason, owner=self._owner,
                                at=now))
        return rec

    def _append_charge(self, req: RoundRequest, label: Label | None, charged: Fraction,
                       reason: str, *, now: float, texts: tuple[str, str] | None = None
                       ) -> RoundRecord:
        seq = self._next_seq()
        rec = self._state.apply_charge(seq, seq + 1, req, label, charged=charged, reason=reason,
                                       at=now)
        rec.extra["owner"] = self._owner
        self._append(reserve_row(seq, req, self._owner, now, texts=texts))
        self._append(settle_row(seq + 1, req.round_id, label, charged, reason=reason,
                                owner=self._owner, at=now))
        return rec

    # ------------------------------------------------------------------ the protocol
    def _require_writable(self) -> None:
        if getattr(self, "_readonly", False):
            raise LedgerError(f"{self._where} is open read-only")

    def reserve(self, req: RoundRequest, admit: Admission | None = None) -> RoundRecord:
        texts = request_texts(req)  # outside the transaction: it holds the ledger's lock

        def op() -> RoundRecord:
            if not (admit or sum_rule)(self._state, req):
                raise budget_exceeded(self._state, req, admit)
            return self._append_reserve(req, self._clock(), texts)

        return self._write(op, "reservation")

    def reserve_many(self, reqs: Iterable[RoundRequest], admit: Admission | None = None
                     ) -> list[RoundRecord]:
        """Reserve every request in order, each admitted against the state that includes the
        ones before it, in one transaction (one durable commit): all are recorded, or —
        :class:`BudgetExceeded` for the first refused — none."""
        self._require_writable()
        batch = _batch_of(reqs, "reservations")

        def op() -> list[RoundRecord]:
            now = self._clock()
            return reserve_each(self._state, batch, admit,
                                lambda req: self._append_reserve(req, now))

        return self._write(op, "reservations") if batch else []

    def settle(self, round_id: str, label: Label | None, charged: Fraction,
               reason: str = REASON_RELEASED, *, interactive_rule: bool = True,
               check: TransitionCheck | None = None) -> RoundRecord:
        failed: list[bool] = []

        def op() -> RoundRecord:
            lab, chg, why, bad = settlement(self._state, round_id, label, charged,
                                            reason=reason, interactive_rule=interactive_rule,
                                            check=check)
            failed.append(bad)
            return self._append_settle(round_id, lab, chg, why, now=self._clock())

        rec = self._write(op, f"settle of round {round_id}", (round_id,), durable=False)
        if failed[-1]:
            raise enforcement_error(round_id)
        return rec

    def settle_many(self, items: Iterable[SettleItem], *, interactive_rule: bool = True,
                    check: TransitionCheck | None = None) -> list[RoundRecord]:
        """Settle several reserved rounds — ``(round_id, label, charged, reason)`` each — in one
        transaction.  Every settle is validated as by :meth:`settle`; an invalid one records
        none of them.  If the transition check refuses some, they are charged their sup, all
        are committed, and :class:`CertificateError` is raised for the first."""
        self._require_writable()
        batch = _batch_of(items, "settlements")
        failed: list[str] = []

        def op() -> list[RoundRecord]:
            now = self._clock()
            failed.clear()
            return settle_each(
                self._state, batch,
                lambda round_id, lab, chg, why: self._append_settle(round_id, lab, chg, why,
                                                                    now=now),
                interactive_rule=interactive_rule, check=check, failed=failed)

        recs = (self._write(op, "settlements", [item[0] for item in batch], durable=False)
                if batch
                else [])
        if failed:
            raise enforcement_error(failed[0])
        return recs

    def charge(self, req: RoundRequest, label: Label | None, charged: Fraction,
               admit: Admission | None = None, *, check: TransitionCheck | None = None
               ) -> RoundRecord:
        self._require_writable()
        realised = validate_charge(req.guarantee, req.sup_epsilon, label, charged)
        failed: list[str] = []

        texts = request_texts(req)

        def op() -> RoundRecord:
            failed.clear()
            return self._charge_one(req, label, charged, admit=admit, check=check,
                                    now=self._clock(), failed=failed, texts=texts,
                                    realised=realised)

        rec = self._write(op, "charge")
        if failed:
            raise enforcement_error(req.round_id)
        return rec

    def charge_many(self, items: Iterable[ChargeItem], admit: Admission | None = None,
                    check: TransitionCheck | None = None) -> list[RoundRecord]:
        """Charge several releases — ``(request, label, charged)`` each — in one transaction,
        each admitted against the state including the ones before it: all or none."""
        self._require_writable()
        batch = _batch_of(items, "charges")
        checked = [validate_charge(req.guarantee, req.sup_epsilon, label, charged)
                   for req, label, charged in batch]
        failed: list[str] = []

        def op() -> list[RoundRecord]:
            now = self._clock()
            failed.clear()
            return [self._charge_one(req, label, charged, admit=admit, check=check, now=now,
                                     failed=failed, realised=realised)
                    for (req, label, charged), realised in zip(batch, checked)]

        recs = self._write(op, "charges") if batch else []
        if failed:
            raise enforcement_error(failed[0])
        return recs

    def _charge_one(self, req: RoundRequest, label: Label | None, charged: Fraction, *,
                    admit: Admission | None, check: TransitionCheck | None, now: float,
                    failed: list[str], texts: tuple[str, str] | None = None,
                    realised: tuple[list[Fraction] | None, int | None] | None = None
                    ) -> RoundRecord:
        """``realised``: :func:`realised_blocks` of the round (as :func:`validate_charge`
        returned it), if already computed."""
        state = self._state
        if not (admit or sum_rule)(state, req):
            raise budget_exceeded(state, req, admit)
        if is_lane_charge(req.guarantee):  # charged in full, before its release
            check_lane(state, req, check)
            return self._append_charge(req, label, charged, REASON_LANE, now=now, texts=texts)
        if check is not None:  # the round is not in the state yet: check against it directly
            blocks, realized = realised or realised_blocks(req.guarantee, label)
            if not check(state.eps_left, state.delta_left, req.sup_epsilon, charged, req.delta,
                         blocks, realized, mechanism=req.mechanism, params=req.params):
                failed.append(req.round_id)
                return self._append_charge(req, None, req.sup_epsilon, REASON_ENFORCED,
                                           now=now, texts=texts)
        return self._append_charge(req, label, charged, REASON_RELEASED, now=now, texts=texts)

    def _recover(self) -> list[str]:
        """Settle at sup the pending reservations whose owner is gone; returns their ids."""
        dead = self._dead_owner_rounds()
        if not dead:
            return []

        def op() -> list[str]:
            done = []
            for round_id in dead:
                rec = self._state.get(round_id)
                if rec.status == "pending":
                    self._append_settle(round_id, None, rec.sup_epsilon, REASON_RECOVERED,
                                        now=self._clock())
                    done.append(round_id)
            return done

        return self._write(op, "recovery")


def _batch_of(items: Iterable[_T], what: str) -> list[_T]:
    batch = list(items)
    if len(batch) > MAX_BATCH:
        raise LedgerError(f"a batch holds at most {MAX_BATCH} {what}, got {len(batch)}; "
                          "split it")
    return batch


def default_clock() -> float:
    return time.time()


@dataclass(frozen=True)
class OpenSeams:
    """Not public: what a ledger's private constructor (``_open``) may fix and its public one
    never does — the ``clock`` of its row timestamps; for a SQLite ledger also the
    ``ledger_id`` it is created with and whether its head files are checked on opening
    (``check_heads``)."""

    clock: Callable[[], float] = default_clock
    ledger_id: str | None = None
    check_heads: bool = True


__all__ = ["ChainedLedger", "MAX_BATCH", "OpenSeams", "default_clock", "LedgerCorrupted"]
