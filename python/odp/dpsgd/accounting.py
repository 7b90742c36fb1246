"""Account a DP-SGD training loop you run yourself (any framework) in an odp ledger.

:class:`Accounting` is the training loop's accountant.  It knows nothing of the model, the data
or the framework: it is told the public parameters of the run (a :class:`~odp.dpsgd.schedule.
Schedule` of sampling rates and noise multipliers, the most steps, where the run may stop) and
is called once per noisy step::

    acc = odp.Accountant(epsilon=8, delta="1e-5", ledger="runs.ledger")
    run = odp.dpsgd.Accounting(acc, sampling_rate="1/100", noise_multiplier="1.1",
                               delta="1e-6", max_steps=10_000, stops=100)  # every 100 steps
    for batch in loader:                 # Poisson sampling at rate 1/100
        run.step()                       # before the step's noise is drawn (it may refuse)
        noisy = ...                      # clip, sum, add N(0, (1.1·C)²) noise
        update(noisy)
        if run.at_stop() and public_rule(released_values):
            break
    run.stop()                           # settles the ledger round

**What is charged: Alg. 3 and Lemma 11 of Hartmann et al. 2022.**  The run is an iterative
mechanism whose ODP partition is the number of steps it ran.  When the accounting is created,
the round is *reserved* in the ledger at its worst case: ``ε^{k_n}`` (the cost of running all
``max_steps = k_n`` steps) and the target δ — admitted against the budget before the first step
(:class:`~odp.errors.BudgetExceeded` otherwise, nothing recorded).  The stops
``k_1 < … < k_n`` are the step counts at which the run may end; the cost of stopping at
``k_i`` is ``ε^{k_i}``, the ε a composition theorem COMP certifies for the first ``k_i`` steps at
the δ share ``δ/n``, and the round's δ is Lemma 11's ``Σ_i COMP(M_1..M_{k_i}; ε^{k_i}) ≤ δ``.
:meth:`stop` settles the round at the cost of the smallest stop ``k_i ≥`` the steps run (a run
that ends between stops is charged as if it ran to the next one: its output is a truncation,
i.e. a post-processing, of that run's).  The COMP is Rényi DP (:class:`~odp.dpsgd.compositions.
ScheduleRDP`, default, fast) or privacy buckets (:class:`~odp.dpsgd.compositions.
ScheduleBuckets`, tighter); the round is recorded as ``dpsgd[name]`` with its stops, costs and
per-stop δ, so its certificate carries a ``mech lemma11`` row checked against Lemma 11
(:mod:`odp.certs.mechanisms`).

**The stopping rule must not look at the private data.**  Lemma 11 holds for stopping rules
``h(s_1, …, s_{k_i})`` of the *released* outputs (the noisy gradients, the model they produce)
and of public data.  Stopping on the loss or accuracy of a private validation set, on the
un-noised gradient norm, or on anything computed from the training data without noise makes
the stop a function of the data: the ODP charge is then not valid.  A private validation score
must itself be released by a DP mechanism that is charged (and counted as a step).

**Where the settlement happens (a seam).**  :class:`Settlement` is what reserves and settles
the round; :class:`OdpLaneSettlement` is the ODP route above.  On a ledger with a Rényi lane
(``odp.Lane.renyi``) the default is :class:`~odp.dpsgd.renyi_lane.RenyiLaneSettlement`
instead: each stretch of steps up to the next stop is charged to the lane before it runs, at
the lane's δ, with no δ split over the stops (:mod:`odp.dpsgd.renyi_lane`).  ``settlement=
"lemma11"`` or ``"renyi"`` picks one; so does giving ``composition=`` (Lemma 11's COMP).

**What is assumed.**  The guarantee is that of the declared mechanism: every step samples each
record independently with probability ``q`` (Poisson sampling; :func:`odp.dpsgd.
check_poisson_batches` tests a loader's batch sizes against it) and adds Gaussian noise of
standard deviation ``σ·C`` to a sum of contributions each clipped to L2 norm ``C``, under
add/remove neighbours (or, with ``neighbours="replace-one"``, that guarantee converted by group
privacy) — the relation the run declares (:mod:`odp.neighbours`), which must be its
accountant's: an accountant of another relation refuses the run before anything is reserved.
odp does not see the loop's noise: floating-point Gaussian noise is not
exactly Gaussian, and a non-cryptographic generator is not random (``odp.mechanisms.DPSGD``
is a trainer whose noise is exact).
"""

from __future__ import annotations

import math
from fractions import Fraction
from types import TracebackType
from typing import TYPE_CHECKING, Any, Sequence

from ..buckets import Interval
from ..budget import format_fraction, parse_delta
from ..composition import BucketsComposition, PrefixComposition, RDPComposition, \
    ReplaceOneComposition
from ..errors import InvalidParameter, OdpError
from ..guarantees import ODP
from ..ledger import REASON_ABORTED, REASON_FAILED, RoundRecord
from ..neighbours import Neighbours
from ..stops import parse_stops
from .compositions import ScheduleBuckets, composition_of
from .renyi_lane import RenyiLaneSettlement, renyi_lane_of
from .schedule import Schedule
from .settlement import Settlement, TrainingRun

if TYPE_CHECKING:
    from ..accountant import Accountant, Reservation

__all__ = ["Accounting", "Settlement", "OdpLaneSettlement", "StepLimitReached",
           "SETTLEMENTS", "settlement_of"]

#: The δ share of each stop is ``δ/n`` times this (so that the sum of the per-stop δ, each an
#: upper bound rounded up, stays at most the target).
_SHARE_MARGIN = 1 - Fraction(1, 10**15)


class StepLimitReached(OdpError):
    """A step beyond the run's ``max_steps``: it is not covered by the reserved round.  The
    step must not be used (nothing of it may be released); :meth:`Accounting.stop` the run."""


def _length(release: Any) -> int:
    """The ODP partition of a training run: the number of steps it ran (Alg. 3)."""
    return int(release)


#: The built-in key the ledger records for a run accounted by :class:`Accounting` itself
#: (:mod:`odp.mechanisms.builtin`): a ``mech lemma11`` row, whose hypotheses include that the
#: training loop, which odp does not run, samples and adds noise as its schedule says.
LOOP_KEY = "dpsgd_loop"


class OdpLaneSettlement(Settlement):
    """Alg. 3 with Lemma 11 (Hartmann et al. 2022): an ODP round whose classes are the stops.

    ``composition``: the COMP, ``"rdp"`` (default), ``"buckets"``, or a
    :class:`~odp.dpsgd.compositions.ScheduleRDP` / :class:`~odp.dpsgd.compositions.
    ScheduleBuckets` instance (add/remove; replace-one neighbours wrap it by group privacy)."""

    name = "lemma11"

    def __init__(self, composition: Any = "rdp"):
        self.inner: RDPComposition | BucketsComposition = composition_of(composition)
        self._reservation: Reservation | None = None
        self.stops: list[int] = []
        self.costs: list[Fraction] = []
        self.stop_deltas: list[Fraction] = []
        self.delta: Fraction = Fraction(0)

    def plan(self, schedule: Schedule, stops: Sequence[int], delta: Fraction,
             neighbours: Neighbours) -> ODP:
        """The run's ODP guarantee: per stop ``ε^{k_i}`` at the share ``δ/n`` and Lemma 11's
        δ (checked ``≤ delta``); the declared δ is ``delta``."""
        comp: PrefixComposition = (ReplaceOneComposition(self.inner)
                                   if neighbours is Neighbours.REPLACE_ONE else self.inner)
        share = delta / len(stops) * _SHARE_MARGIN
        costs: list[Fraction] = []
        deltas: list[Fraction] = []
        for k in stops:  # in increasing order: an incremental COMP composes each step once
            prefix = schedule.prefix(k)
            costs.append(comp.epsilon_upper(prefix, share))
            deltas.append(Fraction(comp.delta_upper(prefix, costs[-1])))  # Lemma 11's δ^{k_i}
        total = sum(deltas, Fraction(0))
        if total > delta:  # pragma: no cover - each per-stop δ is at most its share
            raise InvalidParameter(
                f"internal: Lemma 11's delta {format_fraction(total)} exceeds the target")
        self.stops, self.costs, self.stop_deltas = list(stops), costs, deltas
        self.delta = delta
        self._rule = {"name": "lemma11", "composition": comp.to_json()}
        return ODP(_length, dict(zip(stops, costs)), delta)

    def open(self, run: "TrainingRun") -> None:
        guarantee = self.plan(run.schedule, run.stops, run.delta, run.neighbours)
        params = {
            "stops": self.stops,
            "costs": [str(c) for c in self.costs],
            "delta": str(self.delta),
            "lemma11_delta": str(sum(self.stop_deltas, Fraction(0))),
            "stop_deltas": [str(d) for d in self.stop_deltas],
            "rule": self._rule,
            "schedule": run.schedule.to_json(),
            "neighbours": run.neighbours.value,
            **self.details(),
            **run.params,
        }
        # odp's own accounting of a loop it does not run: the certificate gets a Lemma 11 row
        # (its arithmetic checked); that the loop does what its schedule says is declared
        own = type(run) is Accounting and type(self) is OdpLaneSettlement
        self._reservation = run.accountant._reserve(
            guarantee, mechanism=f"dpsgd[{run.name}]", params=params, interactive=False,
            builtin=LOOP_KEY if own else None)

    def _class(self, steps: int) -> int:
        return next(k for k in self.stops if k >= steps)

    def charge_at(self, steps: int) -> tuple[int, Fraction]:
        k = self._class(steps)
        return k, self.costs[self.stops.index(k)]

    def close(self, steps: int) -> RoundRecord:
        assert self._reservation is not None
        return self._reservation.settle_class(self._class(steps))

    def abort(self, reason: str) -> RoundRecord:
        assert self._reservation is not None
        return self._reservation.abort(reason)

    @property
    def reserved(self) -> tuple[Fraction, Fraction]:
        return self.costs[-1], self.delta

    @property
    def round_id(self) -> str | None:
        return None if self._reservation is None else self._reservation.round_id


#: The names ``settlement=`` accepts.
SETTLEMENTS = ("lemma11", "renyi")


def settlement_of(value: Any, composition: Any, accountant: "Accountant",
                  neighbours: Neighbours) -> Settlement:
    """The settlement of a run: ``value`` itself (a :class:`Settlement`), ``"lemma11"``
    (:class:`OdpLaneSettlement` with ``composition``, default ``"rdp"``) or ``"renyi"``
    (:class:`~odp.dpsgd.renyi_lane.RenyiLaneSettlement`); ``None``: the Rényi lane when the
    ledger has one, the run is add/remove and no ``composition`` is given (as
    :meth:`odp.Accountant.run` sends :class:`odp.mechanisms.DPSGD` there), else Lemma 11."""
    if isinstance(value, Settlement):
        if composition is not None:
            raise InvalidParameter("give composition= or a settlement object, not both (the "
                                   "settlement carries its own composition)")
        return value
    if value is None:
        value = ("renyi" if composition is None and neighbours is Neighbours.ADD_REMOVE
                 and renyi_lane_of(accountant) is not None else "lemma11")
    if value == "lemma11":
        return OdpLaneSettlement("rdp" if composition is None else composition)
    if value == "renyi":
        if composition is not None:
            raise InvalidParameter("composition= is Lemma 11's COMP; a Rényi lane composes by "
                                   "adding RDP (settlement='renyi' takes no composition)")
        return RenyiLaneSettlement()
    raise InvalidParameter(f"settlement must be one of {SETTLEMENTS} or an odp.dpsgd.Settlement, "
                           f"got {value!r}")


def _stops(stops: Any, max_steps: int, epoch: int) -> list[int]:
    """``None``: every ``epoch`` steps; an int ``n``: every ``n`` steps; else the given list.
    ``max_steps`` is always the last stop."""
    if stops is None:
        stops = epoch
    if isinstance(stops, int) and not isinstance(stops, bool):
        if stops < 1:
            raise InvalidParameter(f"stops: an interval of steps must be >= 1, got {stops}")
        out = list(range(stops, max_steps + 1, stops))
    else:
        out = list(parse_stops(stops))
        if out[-1] > max_steps:
            raise InvalidParameter(f"stops: {out[-1]} is beyond max_steps = {max_steps}")
    if not out or out[-1] != max_steps:
        out.append(max_steps)
    return out


class Accounting:
    """The accountant of one training run (module docstring).

    Parameters
    ----------
    accountant:
        The :class:`odp.Accountant` whose ledger records the run.  Its rounds all hold for one
        neighbouring relation (:attr:`odp.Accountant.neighbours`), which must be this run's
        (``neighbours``): another is refused before anything is reserved
        (:class:`~odp.errors.NeighboursMismatch`).
    delta:
        The run's δ, ``0 < δ < 1``: the reserved and charged δ (Lemma 11).  In a Rényi lane
        the run is charged at the lane's δ: omit it (it is then the lane's δ per order).
    sampling_rate, noise_multiplier, max_steps:
        A constant run: ``q``, ``σ`` and the most steps.  Or give ``schedule`` instead.
    schedule:
        A :class:`~odp.dpsgd.schedule.Schedule` (per-step or per-epoch ``q`` and ``σ``); its
        length is the most steps.
    stops:
        Where the run may end: ``None`` (every epoch, ``⌈1/q⌉`` steps at the first phase's
        ``q``), an int ``n`` (every ``n`` steps) or a list of step counts.  The last stop is
        always the most steps.  More stops cost more: each gets the δ share ``δ/n``.
    composition:
        ``"rdp"`` (default) or ``"buckets"``: the COMP of Lemma 11 (:class:`OdpLaneSettlement`);
        giving it chooses the Lemma 11 route.
    neighbours:
        :attr:`odp.Neighbours.ADD_REMOVE` (default; what Poisson-sampled DP-SGD is analysed
        for) or :attr:`~odp.Neighbours.REPLACE_ONE` (group privacy,
        :class:`odp.composition.ReplaceOneComposition`), or their strings ``"add-remove"``,
        ``"replace-one"``.
    name:
        Recorded in the ledger as the mechanism ``dpsgd[name]``.
    params:
        More JSON-serialisable facts to record with the round (model, data set, …).
    settlement:
        A :class:`Settlement`, ``"lemma11"`` or ``"renyi"``; default: a
        :class:`~odp.dpsgd.renyi_lane.RenyiLaneSettlement` when the ledger has a Rényi lane, the
        run is add/remove and no ``composition`` is given, else :class:`OdpLaneSettlement`
        with ``composition`` (:func:`settlement_of`).
    interval_options:
        Options of :class:`odp.buckets.PrivacyBucketsAccountant` for :meth:`epsilon`.
    """

    def __init__(self, accountant: "Accountant", *, delta: Any = None, sampling_rate: Any = None,
                 noise_multiplier: Any = None, max_steps: int | None = None,
                 schedule: Schedule | None = None, stops: Any = None, composition: Any = None,
                 neighbours: Neighbours | str = Neighbours.ADD_REMOVE,
                 name: str = "training loop",
                 params: dict[str, Any] | None = None, settlement: Settlement | str | None = None,
                 interval_options: dict[str, Any] | None = None):
        from ..accountant import Accountant

        if not isinstance(accountant, Accountant):
            raise InvalidParameter("accountant must be an odp.Accountant")
        if schedule is None:
            if sampling_rate is None or noise_multiplier is None or max_steps is None:
                raise InvalidParameter("give sampling_rate, noise_multiplier and max_steps, or a "
                                       "schedule")
            schedule = Schedule.constant(sampling_rate, noise_multiplier, max_steps)
        elif not isinstance(schedule, Schedule):
            raise InvalidParameter("schedule must be an odp.dpsgd.Schedule")
        elif sampling_rate is not None or noise_multiplier is not None:
            raise InvalidParameter("give a schedule or sampling_rate and noise_multiplier, not "
                                   "both")
        elif max_steps is not None and max_steps != len(schedule):
            raise InvalidParameter(f"max_steps = {max_steps} differs from the schedule's "
                                   f"{len(schedule)} steps")
        relation = Neighbours.parse(neighbours)
        if not isinstance(name, str) or not name or "]" in name:
            raise InvalidParameter("name must be a non-empty string without ']'")
        if params is not None and not isinstance(params, dict):
            raise InvalidParameter("params must be a dict")
        accountant._check_neighbours(relation, f"the training run {name!r}")  # before reserving
        self.accountant = accountant
        self.schedule = schedule
        self.max_steps = len(schedule)
        epoch = math.ceil(1 / schedule.phases[0].sampling_rate)
        self.stops = _stops(stops, self.max_steps, epoch)
        #: the relation the run's guarantee holds for (:mod:`odp.neighbours`)
        self.neighbours: Neighbours = relation
        self.name = name
        self.params = dict(params or {})
        self.settlement = settlement_of(settlement, composition, accountant, relation)
        self.delta = self.settlement.delta_for(accountant, delta)
        self._interval = ScheduleBuckets(**(interval_options or {}))
        self._intervals: dict[tuple[int, Fraction], Interval] = {}
        self._steps = 0
        self.record: RoundRecord | None = None
        self.settlement.open(self)  # BudgetExceeded: nothing recorded

    # ------------------------------------------------------------------ state
    @property
    def steps_run(self) -> int:
        """Noisy steps registered so far."""
        return self._steps

    @property
    def open(self) -> bool:
        """The round is reserved and not settled yet."""
        return self.record is None

    @property
    def reserved(self) -> tuple[Fraction, Fraction]:
        """``(ε, δ)`` held in the ledger until :meth:`stop`."""
        return self.settlement.reserved

    @property
    def round_id(self) -> str | None:
        """The ledger round of this run."""
        return self.settlement.round_id

    def _check_open(self) -> None:
        if self.record is not None:
            raise InvalidParameter("this training run is settled; start a new Accounting")

    # ------------------------------------------------------------------ the loop
    def step(self) -> int:
        """Register one noisy step, before it is used; returns the steps run so far.  Beyond
        ``max_steps`` it raises :class:`StepLimitReached` and counts nothing."""
        return self.steps(1)

    def steps(self, n: int) -> int:
        """Register ``n`` noisy steps at once (all or none), before their noise is drawn.  In a
        Rényi lane the stretch they start is charged here; a refusal raises
        :class:`~odp.errors.BudgetExceeded`, counts nothing, and the steps must not run."""
        self._check_open()
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InvalidParameter(f"steps(n) takes an integer n >= 1, got {n!r}")
        self._check_limit(n)
        self.settlement.before_steps(self._steps, n)
        self._steps += n
        return self._steps

    def _check_limit(self, n: int) -> None:
        if self._steps + n > self.max_steps:
            raise StepLimitReached(
                f"step {self._steps + n} is beyond max_steps = {self.max_steps}: the reserved "
                "round does not cover it, so it must not be used; stop() the run")

    def prepare_step(self) -> None:
        """Make sure the next step is paid for, without counting it: for a loop whose
        :meth:`step` can only come after the step's noise is drawn (Opacus's hook), call this
        before the noise.  In a Rényi lane it charges the stretch the next step starts (or
        raises :class:`~odp.errors.BudgetExceeded`: do not run it); on the ODP route the whole
        run is reserved and it only checks ``max_steps``."""
        self._check_open()
        self._check_limit(1)
        self.settlement.before_steps(self._steps, 1)

    def at_stop(self) -> bool:
        """Whether the steps run so far are one of the stops (where stopping costs exactly that
        stop's ε; stopping elsewhere is charged the next stop's)."""
        return self._steps in self.stops

    def current(self) -> tuple[int, Fraction, Fraction]:
        """``(k, q, σ)``: the number of the next step and its sampling rate and noise multiplier."""
        k = min(self._steps + 1, self.max_steps)
        p = self.schedule.phase_of(k)
        return k, p.sampling_rate, p.noise_multiplier

    def charge_if_stopped(self) -> tuple[int, Fraction]:
        """``(stop, ε)``: the class and the ε :meth:`stop` would charge now (in a Rényi lane:
        the steps paid for and their RDP converted at the lane's δ)."""
        return self.settlement.charge_at(self._steps)

    def _delta(self, delta: Any) -> Fraction:
        d = self.delta if delta is None else parse_delta(delta, name="delta")
        if not 0 < d < 1:
            raise InvalidParameter("delta must be in (0, 1)")
        return d

    def epsilon(self, delta: Any = None) -> Interval:
        """A rigorous interval ``(lower, upper)`` around the tight ε of the steps run so far at
        ``delta`` (default: the run's δ); ``upper`` is a valid (ε, δ)-DP guarantee of those
        steps, and no analysis can certify less than ``lower``.  On the ODP route both ends are
        privacy buckets' (:meth:`tight_epsilon`; what the ledger charges at :meth:`stop` is the
        ODP cost, :meth:`charge_if_stopped`).  In a Rényi lane ``upper`` is the lane-side value
        — the steps' RDP at the lane's orders, converted as the lane converts — and ``lower``
        privacy buckets'."""
        d = self._delta(delta)
        if self._steps == 0:
            return Interval(Fraction(0), Fraction(0))
        own = self.settlement.epsilon(self, self._steps, d)
        return own if own is not None else self.tight_epsilon(d)

    def tight_epsilon(self, delta: Any = None) -> Interval:
        """Privacy buckets' rigorous interval ``(lower, upper)`` around the tight ε of the steps
        run so far at ``delta`` (default: the run's δ), on the schedule's dominating pairs.
        Cached per (steps, δ); computed incrementally."""
        d = self._delta(delta)
        if self._steps == 0:
            return Interval(Fraction(0), Fraction(0))
        key = (self._steps, d)
        if key not in self._intervals:
            self._intervals[key] = self._interval.interval(self.schedule.prefix(self._steps), d)
        return self._intervals[key]

    def stop(self) -> RoundRecord:
        """Settle the round: charge the cost of the smallest stop at or after the steps run
        (the first stop if none ran).  Returns the ledger's record of the round.  In a Rényi
        lane every stretch was paid before it ran: nothing more is charged, and the record is
        the last stretch's (``settlement.records`` has them all)."""
        self._check_open()
        self.record = self.settlement.close(self._steps)
        return self.record

    def abort(self, reason: str = REASON_ABORTED) -> RoundRecord:
        """Settle the round at its worst case (e.g. the loop failed in a way that may depend on
        the data).  In a Rényi lane what was paid stays paid (a lane has no refunds) and no
        unpaid step ran: nothing more is charged."""
        self._check_open()
        self.record = self.settlement.abort(reason)
        return self.record

    def __enter__(self) -> "Accounting":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.record is None:
            if exc_type is None:
                self.stop()
            else:  # a failure may depend on the data: charge the worst case
                self.abort(REASON_FAILED)

    def __repr__(self) -> str:
        state = "open" if self.record is None else "settled"
        return (f"Accounting({self.name!r}, {self._steps}/{self.max_steps} steps, "
                f"{len(self.stops)} stops, {state})")
