"""The ODP accountant: the composition experiment of Alg. 1 (Hartmann et al. 2022) run as a filter.

``Accountant.run(mechanism, data)`` performs one round of Alg. 1:

1. **admit** (line 4): the mechanism's declared guarantee (𝒫_i, ℰ_i, δ_i) must fit:
   ``sup_k ℰ_i(P_k) ≤ ε_r`` and ``δ_i ≤ δ_r`` — else :class:`~odp.errors.BudgetExceeded` is
   raised *before any noise is drawn* and nothing is recorded;
2. **reserve**: the worst case (sup ℰ_i, δ_i) is durably recorded in the ledger (a crash from
   here on leaves the round charged at its sup);
3. **release** (line 5): the mechanism runs, drawing exact noise from the accountant's RNG;
4. **classify** (line 6): ``k`` = the class of the release under the declared partition;
5. **settle** (lines 7–8): ``ε_r −= ℰ_i(P_k)`` and ``δ_r −= δ_i`` — δ_i whatever the class.

Before step 1 the mechanism may validate the public shape of the data
(:meth:`odp.Mechanism.check_public`), and the accountant checks that ``release(data, rng)`` and
the mechanism's query functions (``query``/``queries``) accept the arguments they will be called
with; a failure there costs nothing.  A failure after the reservation (the query raised or
returned NaN, the mechanism failed, or its release fits none of the declared classes) charges
the round its worst case, because noise may already have been drawn; the exception is re-raised
unchanged with a note saying what was charged and why (shown in the traceback; also
``exc.odp_round``, the settled :class:`~odp.ledger.RoundRecord`).  Whether a query *returns* a
valid number cannot be checked before the reservation: that depends on the private data, and
refusing for free would leak it.

Theorem 7 then guarantees that everything released through one accountant is (ε_t, δ_t)-DP,
for any adaptive choice of mechanisms, provided each mechanism's declared ODP guarantee is
true.  Several accountants (threads or processes) may share one SQLite ledger; rounds are
admitted atomically and ordered by reservation.

Interactive mechanisms (a round whose output is revealed piece by piece, e.g. an SVT session)
use :meth:`Accountant.reserve` with ``interactive=True``: they are refunded below their sup only
if no other round was reserved on the same ledger while they were open — the run is then the
sequential Alg. 1; an overlapped round is charged its sup, the DP cost that concurrent
composition (Haney et al. 2023) covers.
"""

from __future__ import annotations

import inspect
import json
import os
from fractions import Fraction
from types import TracebackType
from typing import TYPE_CHECKING, Any, Iterable, Sequence, cast

from .budget import Budget
from .errors import CertificateError, InvalidGuarantee, InvalidParameter, LedgerError
from .guarantees import DP, GDP, ODP, RDP, ZCDP, as_odp
from .ledger import (
    Admission,
    REASON_ABORTED,
    REASON_FAILED,
    REASON_RELEASED,
    REASON_UNCLASSIFIABLE,
    Ledger,
    RoundRecord,
    RoundRequest,
    open_ledger,
    sum_rule,
)
from .filters.lanes import charge_of, route
from .filters.odp_filter import ODPFilter
from .ledger.base import SettleItem
from .ledger.lanes import (Lane, LaneCharge, LaneStatus, check_lanes, ledger_statuses,
                           session_totals, whole_budget_lane)
from .ledger.records import BudgetState
from .neighbours import Neighbours, mismatch, stated
from .protocols import Chargeable, MechanismLike
from .samplers import SecureRandom
from .types import Data, Label, Number, RandomSource, Release

if TYPE_CHECKING:  # certs imports this module's neighbours; only the annotation is needed
    from .certs.export import Certificate

__all__ = ["Accountant", "Reservation", "SessionBudget"]


def _round_id() -> str:
    """A fresh round id: 128 random bits as 32 hex digits (the same form as ``uuid4().hex``,
    without the cost of building a UUID object on every charge)."""
    return os.urandom(16).hex()


def _request(guarantee: ODP, mechanism: str, params: dict[str, Any] | None,
             interactive: bool) -> RoundRequest:
    if not isinstance(mechanism, str) or not mechanism:
        raise InvalidParameter("mechanism name must be a non-empty string")
    if params:
        try:
            json.dumps(params, sort_keys=True)
        except (TypeError, ValueError) as exc:
            raise InvalidParameter(
                f"params must be JSON-serialisable (they are recorded in the ledger): {exc}; "
                "convert Fractions to strings, e.g. str(x)") from None
    return RoundRequest._of_fields((_round_id(), mechanism, dict(params) if params else {},
                                    guarantee.record(), guarantee.sup_epsilon, guarantee.delta,
                                    interactive))


def _chargeable(guarantee: Chargeable, delta: Number | None) -> tuple[ODP, dict[str, Any] | None]:
    """The ODP guarantee to charge, and what the ledger records about a converted notion."""
    if isinstance(guarantee, (DP, ODP)):
        if delta is not None:
            raise InvalidParameter(
                "delta= is the conversion δ of a zCDP/RDP/GDP charge; a DP or ODP guarantee "
                "carries its own δ; nothing was charged")
        return as_odp(guarantee), None
    if isinstance(guarantee, (ZCDP, RDP, GDP, list, tuple)):
        if delta is None:
            raise InvalidParameter(
                f"charging {guarantee!r} converts it to (ε, δ)-DP: pass delta=, the δ to spend "
                "on the conversion (it is charged like any round's δ); nothing was charged")
        from .conversions import to_dp

        converted = to_dp(guarantee, delta)
        return DP(converted.epsilon, converted.delta).as_odp(), converted.record
    raise InvalidGuarantee(
        f"expected an odp.DP or odp.ODP guarantee, or odp.ZCDP, odp.RDP (or a list of RDP at "
        f"several orders) or odp.GDP with delta=; got {guarantee!r}; nothing was charged")


def _is_sum_rule(admission: Admission | None) -> bool:
    """Is ``admission`` exactly Alg. 1's sum rule (so the Lean ledger rules describe it)?"""
    return (admission is None or admission is sum_rule
            or (isinstance(admission, ODPFilter) and admission.is_sum_rule))


def _check_call(fn: Any, args: tuple[Any, ...], what: str) -> None:
    """Refuse, before anything is reserved, a callable that cannot accept ``args`` (a
    programming error such as ``release(self, data)`` without ``rng``, or a query taking two
    arguments).  Callables without an inspectable signature are not checked."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(*args)
    except TypeError as exc:
        raise InvalidParameter(
            f"{what} cannot be called with {len(args)} argument{'s' if len(args) != 1 else ''} "
            f"({exc}); nothing was reserved or charged") from None


def _check_signatures(mechanism: Any, release_fn: Any, data: Any, rng: Any) -> None:
    _check_call(release_fn, (data, rng), f"{type(mechanism).__name__}.release(data, rng)")
    query = getattr(mechanism, "query", None)
    if callable(query):
        _check_call(query, (data,), "the mechanism's query(data)")
    queries = getattr(mechanism, "queries", None)
    if isinstance(queries, (list, tuple)):
        for i, q in enumerate(queries):
            if callable(q):
                _check_call(q, (data,), f"query {i} of the mechanism (query(data))")


def check_before_release(mechanism: Any, release_fn: Any, data: Any, rng: Any) -> None:
    """What :meth:`Accountant.run` refuses before reserving (so a caller's mistake costs
    nothing): the mechanism's ``check_public(data)`` (public shape of the data), then the
    signatures of its release and queries.  Also used by :mod:`odp.interactive` before it
    charges a filter."""
    check_public = getattr(mechanism, "check_public", None)
    if callable(check_public):
        check_public(data)  # a wrong public shape is refused before anything is reserved
    _check_signatures(mechanism, release_fn, data, rng)  # a wrong call costs nothing


def _release_unmodified(mechanism: Any, release_fn: Any, data: Any, rng: Any, *,
                        builtin: str | None, name: str) -> Release:
    """``release_fn(data, rng)``, withheld (:class:`~odp.errors.InvalidParameter`) when
    ``mechanism`` is one of odp's own (``builtin``, its
    :func:`~odp.mechanisms.builtin.builtin_key` taken before the round) and was modified while
    it ran, e.g. by its query function: its recorded key would no longer describe it."""
    release = release_fn(data, rng)
    if builtin is not None:
        from .mechanisms.builtin import builtin_key

        if builtin_key(mechanism) != builtin:
            raise InvalidParameter(
                f"the {name} mechanism was modified while it ran (e.g. by its query "
                "function): its release is withheld")
    return release


def _note_charged(exc: BaseException, record: RoundRecord | None, why: str) -> None:
    """Attach to ``exc`` what its round was charged and why (a note in the traceback, and
    ``exc.odp_round``)."""
    if record is None:
        return
    from .budget import format_fraction

    charged = record.charged if record.charged is not None else record.sup_epsilon
    text = (f"odp: round {record.index} ({record.mechanism}) was charged its worst case "
            f"epsilon={format_fraction(charged)}, delta={format_fraction(record.delta)} because "
            f"{why}; noise may already have been drawn, so the round cannot be refunded")
    try:
        exc.odp_round = record  # type: ignore[attr-defined]
        if hasattr(exc, "add_note"):
            exc.add_note(text)
        else:  # Python 3.10: keep the note where tools look for it
            exc.__notes__ = [*getattr(exc, "__notes__", []), text]  # type: ignore[attr-defined]
    except (AttributeError, TypeError):  # exceptions that refuse new attributes
        pass


def _note_lane(exc: BaseException, record: RoundRecord) -> None:
    """Attach to ``exc`` that its lane round stays charged (it was charged before the
    release)."""
    text = (f"odp: round {record.index} ({record.mechanism}) stays charged in lane "
            f"{record.lane}: it was charged in full before its release")
    try:
        exc.odp_round = record  # type: ignore[attr-defined]
        if hasattr(exc, "add_note"):
            exc.add_note(text)
        else:  # Python 3.10
            exc.__notes__ = [*getattr(exc, "__notes__", []), text]  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        pass


def _lanes_of(budget: Budget | None, lanes: Sequence[Lane] | None,
              composition: str | None) -> tuple[Lane, ...] | None:
    """The lanes ``Accountant(lanes=…)`` or ``composition=…`` asks for (checked against the
    budget), or None."""
    if composition is not None and lanes is not None:
        raise InvalidParameter("give lanes= or composition=, not both")
    if composition is None and lanes is None:
        return None
    if budget is None:
        raise InvalidParameter("lanes= and composition= divide the budget: give epsilon and "
                               "delta (for an existing ledger, they must be its own)")
    if composition is not None:
        return whole_budget_lane(composition, budget)
    if isinstance(lanes, Lane):
        lanes = [lanes]
    return check_lanes(list(lanes or []), budget)


class SessionBudget(Budget):
    """A laned session's (ε, δ) — spent or remaining — with every lane's status in
    :attr:`lanes` (:class:`~odp.ledger.LaneStatus`)."""

    __slots__ = ("lanes",)
    lanes: tuple[LaneStatus, ...]

    @classmethod
    def of(cls, budget: Budget, lanes: Iterable[LaneStatus]) -> "SessionBudget":
        out = cast("SessionBudget", cls._trusted(budget.epsilon, budget.delta))
        out.lanes = tuple(lanes)
        return out

    def __repr__(self) -> str:
        from .budget import display_fraction

        parts = [f"{s.lane.name} ε={display_fraction(s.current[0])} "
                 f"δ={display_fraction(s.current[1])}" for s in self.lanes]
        return (f"{type(self).__name__}(epsilon={display_fraction(self.epsilon)}, "
                f"delta={display_fraction(self.delta)}; lanes used: {'; '.join(parts)})")


class Reservation:
    """A reserved round (Alg. 1 line 4 passed, worst case held) waiting to be settled.

    Use it as a context manager: leaving the block without :meth:`settle` charges the sup.
    """

    def __init__(self, accountant: "Accountant", record: RoundRecord, guarantee: ODP):
        self._accountant = accountant
        self.record = record
        self.guarantee = guarantee

    @property
    def round_id(self) -> str:
        return self.record.round_id

    @property
    def open(self) -> bool:
        return self.record.status == "pending"

    def _finish(self, label: Label | None, charged: Fraction, reason: str) -> RoundRecord:
        if not self.open:
            raise LedgerError(f"round {self.round_id} is already settled")
        try:
            self.record = self._accountant._settle(self.record, self.guarantee, label=label, charged=charged,
                                                   reason=reason)
        except CertificateError:
            self.record = self._accountant.ledger.snapshot().get(self.round_id)  # charged at sup
            self._accountant.last_round = self.record
            raise
        return self.record

    def settle(self, release: Any) -> RoundRecord:
        """Classify ``release`` and charge its class cost (Alg. 1 lines 6–8).  If the partition
        fails, the round is charged its sup and :class:`InvalidGuarantee` is raised."""
        try:
            label = self.guarantee.classify(release)
        except InvalidGuarantee:
            self._finish(None, self.guarantee.sup_epsilon, REASON_UNCLASSIFIABLE)
            raise
        return self._finish(label, self.guarantee.cost(label), REASON_RELEASED)

    def settle_class(self, label: Label) -> RoundRecord:
        """Charge the cost of class ``label`` directly (for interactive mechanisms that track
        their class themselves)."""
        cost = self.guarantee.cost(label)  # InvalidGuarantee for unknown labels, before writing
        return self._finish(label, cost, REASON_RELEASED)

    def abort(self, reason: str = REASON_ABORTED) -> RoundRecord:
        """Give the round up: it is charged its sup (the safe choice once noise may be out)."""
        return self._finish(None, self.guarantee.sup_epsilon, reason)

    def __enter__(self) -> "Reservation":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.open:
            self.abort(REASON_FAILED if exc_type is not None else REASON_ABORTED)


class Accountant:
    """Exact ODP accountant for a total budget (ε_t, δ_t).

    Parameters
    ----------
    epsilon, delta:
        The total budget, parsed exactly (see :class:`odp.Budget`).  May be omitted when
        ``ledger`` is an existing SQLite file: its recorded budget is used.
    ledger:
        ``None`` (in memory), a path to a SQLite ledger file (created if missing, shared safely
        by several processes), a ``postgresql://`` URL of a ledger made with
        ``odp ledger init URL`` (shared by processes on many machines; needs the ``postgres`` extra),
        or an :class:`odp.ledger.Ledger`.
    rng:
        Randomness for :meth:`run`: :class:`odp.samplers.SecureRandom` by default.  A
        :class:`odp.samplers.SeededRandom` is insecure; rounds run with it are marked
        ``"insecure_rng": true`` in the ledger.
    admission:
        The admission rule of line 4 as ``admit(state, request) -> bool`` (see
        :data:`odp.ledger.Admission`).  ``None`` is Alg. 1's sum rule; a valid ODP filter
        (Hartmann et al. 2022, Def. 19) turns the accountant into Alg. 6.  Only use a rule that has
        a proof: the accountant cannot check that a filter is valid.
    enforce:
        Re-check every transition before its settle row is committed: ``"generated"`` with the
        rules generated from ``Odp/LedgerCore.lean``, ``"lean"`` with an ``odpcheck`` binary
        built from ``OdpCheck.lean`` by the external elan/Mathlib workflow (never built by our
        CI), or ``None``.  A disagreement charges the round its sup and raises
        :class:`~odp.errors.CertificateError` (see :mod:`odp.certs.enforce`).  The default
        (``"auto"``) is ``"generated"`` under Alg. 1's sum rule — ``admission=None``,
        :func:`odp.ledger.sum_rule` itself, or ``ODPFilter()`` (the sum filter, which decides
        with ``sum_rule``; see :attr:`odp.filters.ODPFilter.is_sum_rule`) — and ``None`` under
        any other ``admission``: the Lean ledger rules are Alg. 1's, which another valid filter
        may exceed.
    neighbours:
        The neighbouring relation every round of this accountant holds for
        (:class:`odp.Neighbours`, or ``"replace-one"`` / ``"add-remove"``): Theorem 7 composes
        guarantees for one relation (:mod:`odp.neighbours`).  A new ledger records it (default
        :attr:`~odp.Neighbours.REPLACE_ONE`, the relation of odp's built-in mechanisms); an
        existing ledger keeps the one it records (a ledger made before odp recorded it is
        replace-one), and giving another is refused (:class:`~odp.errors.LedgerError`,
        nothing written).  A round declared for another relation — a mechanism's
        ``neighbours`` attribute, ``neighbours=`` of :meth:`charge` and :meth:`reserve` — is
        refused before any noise is drawn, nothing recorded
        (:class:`~odp.errors.NeighboursMismatch`, which says how to convert).
    """

    def __init__(self, epsilon: Number | None = None, delta: Number = 0, *,
                 ledger: str | os.PathLike[str] | Ledger | None = None,
                 rng: RandomSource | None = None, admission: Admission | None = None,
                 enforce: str | None = "auto", lanes: Sequence[Lane] | None = None,
                 composition: str | None = None, neighbours: Neighbours | str | None = None):
        budget = None if epsilon is None else Budget(epsilon, delta)
        if budget is None and ledger is None:
            raise InvalidParameter("give the total budget (epsilon, delta) or an existing ledger")
        if admission is not None and not callable(admission):
            raise InvalidParameter("admission must be a callable (state, request) -> bool")
        relation = None if neighbours is None else Neighbours.parse(neighbours)
        lane_list = _lanes_of(budget, lanes, composition)
        if lane_list is not None and admission is not None:
            raise InvalidParameter("a laned ledger admits rounds by its lanes' rules; a custom "
                                   "admission rule cannot be combined with lanes=")
        from .certs.enforce import transition_check

        if enforce == "auto":
            enforce = "generated" if _is_sum_rule(admission) else None
        self._check = transition_check(enforce)
        self.enforce = enforce
        self.ledger: Ledger = open_ledger(ledger, budget, lane_list, relation)
        #: The neighbouring relation of every round (:class:`odp.Neighbours`), the ledger's.
        self.neighbours: Neighbours = self.ledger.neighbours
        if admission is not None and self.ledger.lanes is not None:
            raise InvalidParameter("this ledger has lanes, which admit rounds by their own "
                                   "rules; a custom admission rule cannot be used with it")
        self.rng: RandomSource = rng if rng is not None else SecureRandom()
        self.admission = admission
        self.last_round: RoundRecord | None = None

    # ------------------------------------------------------------------ state
    @property
    def budget(self) -> Budget:
        """The total budget (ε_t, δ_t)."""
        return self.ledger.budget

    @property
    def remaining(self) -> Budget:
        """What is left: ε_r and δ_r, with pending rounds held at their sup.  For a laned
        ledger (:attr:`lanes`), a :class:`SessionBudget`: the budget minus what the lanes have
        used (:attr:`spent`), with every lane's status in ``.lanes``."""
        return self._reading(remaining=True)

    @property
    def spent(self) -> Budget:
        """ε and δ used so far (pending rounds at their sup).  For a laned ledger, the sum of
        the lanes' readings (:class:`~odp.ledger.LaneStatus`: an ODP lane's Alg. 1 totals, a
        zCDP lane's Σρ converted at its δ, …) — an odometer reading; the session's guarantee is
        its budget."""
        return self._reading(remaining=False)

    def _reading(self, *, remaining: bool) -> Budget:
        """:attr:`remaining` or :attr:`spent` from one snapshot of the ledger."""
        state = self.ledger.snapshot()
        if state.lanes is None:
            return state.remaining if remaining else state.spent
        statuses = self._statuses(state)
        return SessionBudget.of(session_totals(statuses, state.total)[int(remaining)], statuses)

    @property
    def lanes(self) -> list[LaneStatus]:
        """Every lane of the ledger with what it has used (:class:`~odp.ledger.LaneStatus`);
        a ledger without lanes is one ODP lane holding the whole budget."""
        return ledger_statuses(self.ledger.snapshot())

    @staticmethod
    def _statuses(state: BudgetState) -> list[LaneStatus]:
        return ledger_statuses(state)

    def describe(self) -> str:
        """The budget, the neighbouring relation, every lane (share, notion sums, what it has
        used) and the session's (ε, δ) spent and remaining, in short decimals (one line
        each)."""
        from .budget import display_named

        budget = self.budget
        spent, remaining = self.spent, self.remaining
        lines = [f"budget     {display_named('ε', budget.epsilon, 'down')} "
                 f"{display_named('δ', budget.delta, 'down')}",
                 f"neighbours {self.neighbours} (every round holds for it)"]
        for status in self.lanes:
            lines.append("lane       " + status.describe())
        lines += [f"spent      {display_named('ε', spent.epsilon)} {display_named('δ', spent.delta)}",
                  f"remaining  {display_named('ε', remaining.epsilon, 'down')} "
                  f"{display_named('δ', remaining.delta, 'down')}"]
        return "\n".join(lines)

    @property
    def history(self) -> list[RoundRecord]:
        """Every round in the ledger, in reservation (Alg. 1) order."""
        return self.ledger.rounds()

    # ------------------------------------------------------------------ rounds
    def _params(self, params: dict[str, Any] | None, builtin: str | None = None
                ) -> dict[str, Any]:
        """The params to record.  ``builtin``: the key :func:`odp.mechanisms.builtin.
        builtin_key` gave for one of odp's own mechanisms (recorded under ``BUILTIN_KEY``, which
        a caller's own params may not carry)."""
        from .mechanisms.builtin import BUILTIN_KEY

        if params is not None and not isinstance(params, dict):
            raise InvalidParameter(f"params must be a dict, got {type(params).__name__}")
        out = dict(params or {})
        if BUILTIN_KEY in out:
            raise InvalidParameter(
                f"the params key {BUILTIN_KEY!r} is reserved: odp records it itself, for rounds "
                "that its own built-in mechanisms make through Accountant.run "
                "(docs/certificates.md); nothing was charged")
        if builtin is not None:
            out[BUILTIN_KEY] = builtin
        if not getattr(self.rng, "secure", False):
            out["insecure_rng"] = True
        return out

    def reserve(self, guarantee: DP | ODP, *, mechanism: str = "external",
                params: dict[str, Any] | None = None, interactive: bool = False,
                neighbours: Neighbours | str | None = None) -> Reservation:
        """Admit and durably reserve a round (Alg. 1 line 4) for a mechanism you run yourself;
        settle it with :meth:`Reservation.settle`.  Raises ``BudgetExceeded`` (nothing
        recorded) if the guarantee's sup ε or its δ does not fit.

        ``neighbours``: the relation ``guarantee`` holds for (:class:`odp.Neighbours`); default
        this accountant's — your claim about your mechanism.  Another relation is refused
        before anything is reserved (:class:`~odp.errors.NeighboursMismatch`)."""
        self._check_neighbours(neighbours, "the reserved guarantee")
        return self._reserve(guarantee, mechanism=mechanism, params=params,
                             interactive=interactive, builtin=None)

    def _reserve(self, guarantee: DP | ODP, *, mechanism: str, params: dict[str, Any] | None,
                 interactive: bool, builtin: str | None) -> Reservation:
        """:meth:`reserve`, recording ``builtin`` (odp's own mechanisms only: :meth:`run` and
        :class:`odp.mechanisms.svt.SVTSession`)."""
        g = as_odp(guarantee)
        self._need_odp_lane()
        record = self.ledger.reserve(_request(g, mechanism, self._params(params, builtin),
                                              interactive),
                                     self.admission)
        self.last_round = record
        return Reservation(self, record, g)

    def _need_odp_lane(self) -> None:
        lanes = self.ledger.lanes
        if lanes is not None and not any(lane.notion == "odp" for lane in lanes):
            raise InvalidParameter(
                "this ledger has no ODP lane (its lanes: "
                f"{', '.join(f'{x.name} ({x.notion})' for x in lanes)}): reserve, "
                "reserve_many and charge_many run Alg. 1; charge() or run() a guarantee one of "
                "its lanes takes; nothing was reserved or charged")

    def _check_neighbours(self, relation: Any, what: str) -> None:
        """Refuse, before anything is reserved, a round (``what``) declared for another
        neighbouring relation than this accountant's (:class:`~odp.errors.NeighboursMismatch`);
        ``None`` is this accountant's (the caller's claim)."""
        if relation is None or relation is self.neighbours:
            return
        declared = Neighbours.parse(relation, name=f"the neighbours of {what}")
        if declared is not self.neighbours:
            raise mismatch(what, declared, self.neighbours)

    def _check_stated(self, value: Any, what: str, given: Any) -> None:
        """:meth:`_check_neighbours` for ``value``: the relation it states itself
        (:func:`odp.neighbours.stated`: a mechanism's ``neighbours``, the add/remove tag of
        the RDP curves odp computes) or, if none, ``given`` (the caller's ``neighbours=``).
        A ``given`` relation that contradicts the stated one is refused
        (:class:`~odp.errors.InvalidParameter`): a guarantee is converted by group privacy,
        never relabelled."""
        own = stated(value, what)
        if given is not None and own is not None:
            claimed = Neighbours.parse(given, name=f"the neighbours of {what}")
            if claimed is not own:
                raise InvalidParameter(
                    f"{what} states {own} neighbours (odp computed it for that relation), but "
                    f"neighbours={claimed.value!r} was given: a guarantee is not relabelled — "
                    f"convert it by group privacy (odp.neighbours); nothing was reserved or "
                    "charged")
        self._check_neighbours(given if own is None else own, what)

    def reserve_many(self, guarantees: Iterable[DP | ODP], *, mechanism: str = "external",
                     params: dict[str, Any] | None = None,
                     neighbours: Neighbours | str | None = None) -> list[Reservation]:
        """Reserve several rounds in one durable commit (group commit): each is admitted
        against the budget left by the ones before it, and all are recorded before this
        returns — so each reservation is durable before its noise is drawn — or, with
        ``BudgetExceeded`` for the first that does not fit, none.  Settle them one by one or
        together with :meth:`settle_many`.  ``neighbours``: as for :meth:`reserve`."""
        self._check_neighbours(neighbours, "the reserved guarantees")
        gs = [as_odp(g) for g in guarantees]
        self._need_odp_lane()
        p = self._params(params)
        records = self.ledger.reserve_many([_request(g, mechanism, p, False) for g in gs],
                                           self.admission)
        if records:
            self.last_round = records[-1]
        return [Reservation(self, rec, g) for rec, g in zip(records, gs)]

    def settle_many(self, pairs: Iterable[tuple[Reservation, Any]]) -> list[RoundRecord]:
        """Settle several reservations with their releases in one durable commit.  Every
        release is classified first; an unclassifiable one is charged its sup (reason
        ``unclassifiable``), like :meth:`Reservation.settle`."""
        pairs = list(pairs)
        for i, pair in enumerate(pairs):
            if not (isinstance(pair, (tuple, list)) and len(pair) == 2
                    and isinstance(pair[0], Reservation)):
                raise InvalidParameter(
                    f"settle_many item {i} is {pair!r}: each item must be a pair "
                    "(reservation, release); nothing was settled")
        items: list[SettleItem] = []
        for res, release in pairs:
            if not res.open:
                raise LedgerError(f"round {res.round_id} is already settled")
            try:
                label = res.guarantee.classify(release)
                items.append((res.round_id, label, res.guarantee.cost(label), REASON_RELEASED))
            except InvalidGuarantee:
                items.append((res.round_id, None, res.guarantee.sup_epsilon,
                              REASON_UNCLASSIFIABLE))
        try:
            records = self.ledger.settle_many(items, check=self._check)
        except CertificateError:
            state = self.ledger.snapshot()
            for res, _ in pairs:
                res.record = state.get(res.round_id)
            raise
        for (res, _), rec in zip(pairs, records):
            res.record = rec
        if records:
            self.last_round = records[-1]
        return records

    def charge_many(self, items: Iterable[Any], *, mechanism: str = "external",
                    params: dict[str, Any] | None = None,
                    neighbours: Neighbours | str | None = None) -> list[RoundRecord]:
        """:meth:`charge` for several releases in one durable commit (group commit): each
        item is a guarantee (a DP guarantee, no release needed) or ``(guarantee, release)``.
        All are admitted in order and recorded, or none; a malformed item (a tuple that is not
        a pair, or no guarantee) is refused with :class:`InvalidParameter` naming it, before
        anything is charged.  ``neighbours``: as for :meth:`charge`."""
        self._check_neighbours(neighbours, "the charged guarantees")
        p = self._params(params)
        self._need_odp_lane()
        batch = []
        for i, item in enumerate(items):
            if isinstance(item, tuple) and len(item) != 2:
                raise InvalidParameter(
                    f"charge_many item {i} is a tuple of {len(item)}, {item!r}: each item must "
                    "be a guarantee or a pair (guarantee, release); nothing was charged")
            g, release = (item if isinstance(item, tuple) else (item, None))
            try:
                g = as_odp(g)
            except InvalidGuarantee as exc:
                raise InvalidGuarantee(f"charge_many item {i}: {exc}; nothing was charged"
                                       ) from None
            label = g.classify(release)
            batch.append((_request(g, mechanism, p, False), label, g.cost(label)))
        records = self.ledger.charge_many(batch, self.admission, self._check)
        if records:
            self.last_round = records[-1]
        return records

    def _settle(self, record: RoundRecord, guarantee: ODP, *, label: Label | None,
                charged: Fraction, reason: str) -> RoundRecord:
        settled = self.ledger.settle(record.round_id, label, charged, reason, check=self._check)
        self.last_round = settled
        return settled

    def run(self, mechanism: MechanismLike, data: Data, *, lane: str | None = None) -> Release:
        """One round of Alg. 1 with an odp mechanism (see the module docstring); returns the
        release.  The round's record is ``accountant.last_round``.

        The mechanism must hold for this accountant's neighbouring relation: one whose
        ``neighbours`` attribute names another is refused before anything is reserved, in
        every lane (:class:`~odp.errors.NeighboursMismatch`).  Every built-in mechanism states
        its relation; a mechanism without the attribute (or with ``None``) is taken to hold
        for this accountant's — its author's claim.

        On a laned ledger the round goes to ``lane`` (a lane's name) or to the first lane its
        natural guarantee fits (:mod:`odp.filters.lanes`: a Gaussian mechanism's exact ρ to a
        zCDP lane, …).  A round in a notion lane is charged in full before any noise is drawn
        (a lane has no refunds), or refused with :class:`~odp.errors.BudgetExceeded` and
        nothing recorded; DP-SGD in a Rényi lane pays each stretch of steps between two
        stopping points before running it (:meth:`odp.mechanisms.DPSGD.release_in_lane`)."""
        guarantee = getattr(mechanism, "guarantee", None)
        release_fn = getattr(mechanism, "release", None)
        if guarantee is None or not callable(release_fn):
            hint = ("; for an OpenDP measurement use odp.from_opendp(measurement, d_in)"
                    if type(mechanism).__module__.startswith("opendp") else "")
            raise InvalidParameter(
                "run() needs a mechanism with a declared .guarantee and a .release(data, rng) "
                "method; for your own mechanism use reserve() or charge() (docs/mechanisms.md, "
                "'Write your own mechanism')" + hint)
        name = getattr(mechanism, "name", type(mechanism).__name__)
        # None: the accountant's relation (the caller's claim)
        self._check_neighbours(getattr(mechanism, "neighbours", None), f"the {name} mechanism")
        params_fn = getattr(mechanism, "params", None)
        params = params_fn() if callable(params_fn) else {}
        target = self._lane_for(mechanism, lane)
        if target is not None:
            return self._run_in_lane(target, mechanism, data, release_fn=release_fn, name=name,
                                     params=params)
        if isinstance(guarantee, ZCDP):
            raise InvalidParameter(
                f"{name} declares {guarantee} (zCDP) and no lane of this ledger takes it: run it "
                "in a zCDP lane (odp.Accountant(…, composition=\"zcdp\") or lanes=[…]), or "
                "choose the δ to convert it at (e.g. odp.from_opendp(measurement, d_in, "
                "delta=\"1e-6\")); nothing was reserved or charged")
        g = as_odp(guarantee)
        check_before_release(mechanism, release_fn, data, self.rng)
        from .mechanisms.builtin import builtin_key

        # odp's own mechanism, untouched, or a declared round: from the object, never its name
        builtin = builtin_key(mechanism)
        with self._reserve(g, mechanism=name, params=params, interactive=False,
                           builtin=builtin) as reservation:
            try:
                release = _release_unmodified(mechanism, release_fn, data, self.rng,
                                              builtin=builtin, name=name)
            except BaseException as exc:
                reservation.abort(REASON_FAILED)
                _note_charged(exc, reservation.record,
                              f"the mechanism raised {type(exc).__name__} after the round was "
                              "reserved (e.g. its query failed or returned NaN)")
                raise
            try:
                reservation.settle(release)
            except InvalidGuarantee as exc:
                _note_charged(exc, reservation.record,
                              "the release fits none of the declared classes")
                raise
        return release

    # ------------------------------------------------------------------ lanes
    def _lane_for(self, what: Any, name: str | None) -> tuple[Lane, Any] | None:
        """The notion lane (and the guarantee) a round goes to; None for the ODP lane (or a
        ledger without lanes, where ``lane=`` must be None or ``"odp"``)."""
        lanes = self.ledger.lanes
        if lanes is None:
            if name not in (None, "odp"):
                raise InvalidParameter(f"this ledger has no lanes, so no lane {name!r}; "
                                       "nothing was charged")
            return None
        target, g = route(lanes, what, name)
        if target.notion == "odp":
            return None
        return target, g

    def _lane_request(self, lane: Lane, g: Any, *, mechanism: str, params: dict[str, Any],
                      count: int = 1) -> RoundRequest:
        charge = charge_of(lane, g)
        if count != 1:
            charge = LaneCharge.of(lane, tuple(count * c for c in charge.cost))
        return RoundRequest._of_fields((_round_id(), mechanism, params, charge, Fraction(0),
                                        Fraction(0), False))

    def _charge_lane(self, lane: Lane, g: Any, *, mechanism: str, params: dict[str, Any],
                     count: int = 1) -> RoundRecord:
        request = self._lane_request(lane, g, mechanism=mechanism, params=params, count=count)
        record = self.ledger.charge(request, None, Fraction(0), None, check=self._check)
        self.last_round = record
        return record

    def _run_in_lane(self, target: tuple[Lane, Any], mechanism: Any, data: Any, *,
                     release_fn: Any, name: str, params: dict[str, Any]) -> Release:
        lane, g = target
        from .mechanisms.builtin import builtin_key

        # odp's own mechanism, untouched, or a declared round: from the object, never its name
        builtin = builtin_key(mechanism)
        p = self._params(params, builtin)
        step = getattr(mechanism, "release_in_lane", None)
        if lane.notion == "renyi" and callable(step) and callable(g):
            check_before_release(mechanism, release_fn, data, self.rng)
            _check_call(step, (data, self.rng, lambda n: None), f"{name}.release_in_lane")

            def pay(steps: int) -> None:
                self._charge_lane(lane, g, mechanism=name, params={**p, "steps": steps},
                                  count=steps)

            # each stretch is paid before its noise; a release is withheld, as below, when
            # odp's own mechanism was modified while it ran
            return _release_unmodified(mechanism, lambda d, r: step(d, r, pay), data,
                                       self.rng, builtin=builtin, name=name)
        request = self._lane_request(lane, g, mechanism=name, params=p)  # refused if it cannot
        check_before_release(mechanism, release_fn, data, self.rng)
        record = self.ledger.charge(request, None, Fraction(0), None, check=self._check)
        self.last_round = record
        try:
            return _release_unmodified(mechanism, release_fn, data, self.rng, builtin=builtin,
                                       name=name)
        except BaseException as exc:
            _note_lane(exc, record)
            raise

    def charge(self, guarantee: Chargeable, release: Any = None, *,
               mechanism: str = "external", params: dict[str, Any] | None = None,
               delta: Number | None = None, lane: str | None = None,
               neighbours: Neighbours | str | None = None) -> RoundRecord:
        """Account for a release you already produced with your own mechanism, whose declared
        guarantee is ``guarantee``: admission, reservation and settlement in one atomic step.

        ``guarantee`` is an :class:`odp.DP` or :class:`odp.ODP` guarantee, or one in another
        privacy notion — :class:`~odp.guarantees.ZCDP` (δ = 0), :class:`~odp.guarantees.RDP`,
        a list of RDP values of one mechanism at several orders, or
        :class:`~odp.guarantees.GDP` — which is first converted to (ε, δ)-DP at the δ you
        pass as ``delta=`` (required for those, refused for DP/ODP): that δ is **the
        accountant's δ split** for the round — it is taken from the remaining δ like any
        round's δ, and the round is an ordinary DP(ε, δ) round of Alg. 1 (so certificates
        replay it unchanged).  ε is a rigorous upper bound (:func:`odp.conversions.to_dp`).
        The ledger round records the original notion in its params (``notion``, its
        parameters, ``delta_used``, ``conversion``; see docs/filters.md).

        **One neighbouring relation per accountant.**  Every round of one accountant holds for
        its relation, :attr:`neighbours` (Theorem 7 composes guarantees for one relation;
        :mod:`odp.neighbours`).  ``neighbours=`` says which relation ``guarantee`` holds for
        (:class:`odp.Neighbours`); default the relation the guarantee states itself, else this
        accountant's — your claim.  Another is refused before anything is recorded
        (:class:`~odp.errors.NeighboursMismatch`).  odp's built-in mechanisms use replace-one
        neighbours; DP-SGD curves (:func:`odp.rdp.subsampled_gaussian_curve`,
        :mod:`odp.buckets` ``poisson_gaussian``, dp-accounting, Opacus) hold for add/remove
        neighbours, and the RDP values odp computes for them say so
        (``RDP.neighbours``: :func:`odp.rdp.subsampled_gaussian_curve`,
        :func:`odp.subsampled_rdp.subsampled_discrete_gaussian_curve`,
        :meth:`odp.rdp.RDPAccountant.rdp`): such a curve is refused by a replace-one accountant
        without ``neighbours=``, and ``neighbours=`` contradicting it is refused too
        (:class:`~odp.errors.InvalidParameter`: convert, never relabel).  A mechanism object is
        not a guarantee: ``charge(mechanism)`` is refused (:class:`~odp.errors.
        InvalidGuarantee`) — ``run`` it, or charge ``mechanism.guarantee`` with
        ``neighbours=mechanism.neighbours``.  Convert an add/remove guarantee
        before charging it to a replace-one accountant: by group privacy (replacing = removing +
        adding) an add/remove (ε, δ) is a replace-one (2ε, (1 + e^ε)δ) —
        :class:`odp.composition.ReplaceOneComposition` for a DP-SGD composition, or by hand as
        in docs/filters.md ("One neighbouring relation per accountant") — or keep add/remove
        rounds in an accountant of their own (``neighbours=odp.Neighbours.ADD_REMOVE``).

        The release is classified first; an unclassifiable release, an invalid guarantee or an
        over-budget request raises and records nothing.  (You must not publish a release whose
        charge was refused.)

        **Lanes.**  On a laned ledger a ``ZCDP`` or ``RDP`` guarantee needs no ``delta=``: it
        goes to the zCDP or Rényi lane (``lane=`` names one), charged in its own notion, exactly;
        a DP/ODP guarantee goes to the ODP lane first (:mod:`odp.filters.lanes`).  With
        ``delta=`` the conversion above charges the ODP lane."""
        if callable(getattr(guarantee, "release", None)) or callable(
                getattr(guarantee, "lane_guarantees", None)):
            name = getattr(guarantee, "name", type(guarantee).__name__)
            raise InvalidGuarantee(
                f"charge() takes a guarantee, not a mechanism (the {name} mechanism): run it "
                "with run(mechanism, data), which checks its neighbouring relation and records "
                "it as odp's own; for a release you made with it elsewhere, charge its "
                "guarantee: charge(mechanism.guarantee, neighbours=mechanism.neighbours); "
                "nothing was charged")
        self._check_stated(guarantee, "the charged guarantee", neighbours)
        if delta is None and not isinstance(guarantee, GDP):
            target = self._lane_for(guarantee, lane)
            if target is not None:
                if release is not None:
                    raise InvalidParameter(
                        "a round charged to a notion lane has no output classes: pass no "
                        "release; nothing was charged")
                p = self._params(params)
                return self._charge_lane(target[0], target[1], mechanism=mechanism, params=p)
        elif lane not in (None, "odp") and self.ledger.lanes is not None:
            raise InvalidParameter("delta= converts a guarantee into an ODP-lane round; "
                                   f"lane={lane!r} names a notion lane; nothing was charged")
        self._need_odp_lane()
        g, recorded = _chargeable(guarantee, delta)
        if recorded and mechanism == "external":  # a converted round is named by its notion
            mechanism = recorded["notion"]  # zcdp, rdp or gdp (its parameters: in params)
        p = self._params(params)
        if recorded:
            clash = sorted(set(p) & set(recorded))
            if clash:
                raise InvalidParameter(
                    f"params {clash} are recorded by the conversion of {guarantee!r}; "
                    "use other names; nothing was charged")
            p.update(recorded)
        label = g.classify(release)
        request = _request(g, mechanism, p, False)
        try:
            record = self.ledger.charge(request, label, g.cost(label), self.admission,
                                        check=self._check)
        except CertificateError:
            self.last_round = self.ledger.snapshot().get(request.round_id)  # charged at sup
            raise
        self.last_round = record
        return record

    # ------------------------------------------------------------------ certificates
    def certificate(self) -> Certificate:
        """The run as a certificate (:class:`odp.certs.Certificate`): the ``odpcheck`` ledger
        text plus a JSON sidecar; ``.write(path)`` writes both.  It replays under the rules
        generated from ``Odp/LedgerCore.lean`` to exactly :attr:`remaining`, and records the
        ledger's hash chain (docs/certificates.md).  The ledger is flushed first, so that every
        row the certificate records is on disk."""
        from .certs import certificate_of

        self.ledger.flush()
        return certificate_of(self.ledger)

    # ------------------------------------------------------------------ reporting
    def summary(self) -> dict[str, Any]:
        """Totals for reports: worst-case (plain DP) charge vs the ODP charge."""
        rounds = self.history
        worst = sum((r.sup_epsilon for r in rounds), Fraction(0))
        actual = sum((r.epsilon_held for r in rounds), Fraction(0))
        out: dict[str, Any] = {
            "budget": self.budget.to_json(),
            "neighbours": self.neighbours.value,
            "rounds": len(rounds),
            "epsilon_worst_case": str(worst),
            "epsilon_charged": str(actual),
            "epsilon_saved": str(worst - actual),
            "delta_charged": str(sum((r.delta for r in rounds), Fraction(0))),
            "remaining": self.remaining.to_json(),
        }
        if self.ledger.lanes is not None:  # the ε/δ above are the ODP lane's; every lane:
            out["lanes"] = [status.to_json() for status in self.lanes]
            out["session_spent"] = self.spent.to_json()
        return out

    def close(self) -> None:
        self.ledger.close()

    def __enter__(self) -> "Accountant":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Accountant(budget={self.budget}, remaining={self.remaining})"
