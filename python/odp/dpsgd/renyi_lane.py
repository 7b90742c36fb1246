"""Settle a training loop in a Rényi lane: each stretch of steps is paid before it runs.

:class:`RenyiLaneSettlement` is the :class:`~odp.dpsgd.accounting.Settlement` of a training run
on a ledger with a Rényi lane (``odp.Lane.renyi``, :mod:`odp.ledger.lanes`).  It does what
:meth:`odp.mechanisms.DPSGD.release_in_lane` does for odp's own trainer, for a loop odp does not
run:

* **What a step costs.**  One step of the Poisson-subsampled Gaussian at ``(q, σ)`` is charged
  its Rényi DP at each of the lane's orders, ``ε_{q,σ}(α)``: the Mironov–Talwar–Zhang 2019 value,
  evaluated as a rigorous upper bound (:func:`odp.rdp.subsampled_gaussian_rdp`; add/remove
  neighbours, both directions).  Steps compose adaptively by adding RDP (Mironov 2017, Prop. 1).
* **When it is paid: before each stretch.**  The stretches are the run's stops ``k_1 < … <
  k_n``: steps ``k_{i−1}+1 … k_i`` form stretch ``i``.  The first stretch is charged when the
  accounting is created; a later one when the loop registers its first step
  (:meth:`~odp.dpsgd.Accounting.step`, or :meth:`~odp.dpsgd.Accounting.prepare_step` ahead of
  the noise), as one lane round ``{α: Σ_{steps of the stretch} ε_step(α)}``
  (:meth:`odp.Accountant.charge` with ``lane=``).  The lane admits it only if its sums stay
  within its budget at some order; otherwise :class:`~odp.errors.BudgetExceeded` is raised,
  nothing is recorded, the step is not counted and **must not be run** — the run has paid for
  exactly the stretches it started.  The loop calls ``step()`` *before* it draws the step's
  noise, so a step's cost is always charged before its noise exists.
* **Why per stretch, not per step.**  A lane round per step would be as sound (the charge still
  precedes the noise) but writes one ledger row per step — 10⁴ rows and certificate lines for a
  10⁴-step run.  Per stretch, the ledger grows with the stops (which the caller chooses:
  ``stops=1`` pays step by step), and a run that stops at a stop has paid for exactly its steps;
  one that stops between two stops has paid up to the next one, the same rounding as the ODP
  route's (its output is a truncation of that run's).
* **No δ split.**  The lane's guarantee is its share (ε_j, δ_j), fixed when the ledger was made
  (Haney et al. 2023, Thm. 4.6 at each order with the lane's union bound over its orders;
  docs/filters.md).  The run is charged in RDP, converted by the lane once, at δ_j/m for a lane
  of m orders — not Lemma 11's ``δ/n`` per stop.  What the run used is the conversion of its own
  RDP at that δ (:meth:`used`).

**Stopping.**  As on the ODP route, the decision to stop (or to go on and pay the next stretch)
must read only released values and public data: the lane's filter is valid for an analyst who
chooses the next round from the answers so far, not from the private data.

**Neighbours.**  The Rényi curve is an add/remove bound; a replace-one run is refused here (the
ODP route converts it by group privacy, :class:`odp.composition.ReplaceOneComposition`).
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from ..budget import format_fraction, parse_delta
from ..errors import BudgetExceeded, InvalidParameter, budget_error_as
from ..guarantees import RDP
from ..ledger import RoundRecord
from ..neighbours import Neighbours
from ..readable import Interval
from .settlement import Settlement, TrainingRun

if TYPE_CHECKING:
    from ..accountant import Accountant
    from ..ledger.lanes import Lane
    from .schedule import Schedule

__all__ = ["RenyiLaneSettlement", "renyi_lane_of"]


def renyi_lane_of(accountant: "Accountant", name: str | None = None) -> "Lane | None":
    """The Rényi lane of ``accountant``'s ledger named ``name`` (default: its first Rényi lane);
    ``None`` when the ledger has none (and no ``name`` was asked for)."""
    lanes = accountant.ledger.lanes
    if name is None:
        return next((x for x in lanes or () if x.notion == "renyi"), None)
    lane = next((x for x in lanes or () if x.name == name), None)
    if lane is None:
        have = "no lanes" if not lanes else "lanes " + ", ".join(x.name for x in lanes)
        raise InvalidParameter(f"this ledger has no lane {name!r} ({have}); nothing was charged")
    if lane.notion != "renyi":
        raise InvalidParameter(f"lane {name!r} is a {lane.notion} lane, not a Rényi lane; "
                               "nothing was charged")
    return lane


class RenyiLaneSettlement(Settlement):
    """Pay a training run stretch by stretch in a Rényi lane (module docstring).

    ``lane``: the lane's name (default: the ledger's first Rényi lane)."""

    name = "renyi-lane"

    def __init__(self, lane: str | None = None):
        if lane is not None and not isinstance(lane, str):
            raise InvalidParameter("lane must be a lane's name")
        self.lane_name = lane
        self.lane: Lane | None = None
        self._run: TrainingRun | None = None
        self._step_cost: dict[tuple[Fraction, Fraction], tuple[Fraction, ...]] = {}
        #: steps paid for so far (the end of the last paid stretch)
        self.paid = 0
        #: the run's cost in the lane's coordinates so far (one entry per order)
        self.spent: tuple[Fraction, ...] = ()
        #: the lane rounds of the run, one per paid stretch
        self.records: list[RoundRecord] = []

    # ------------------------------------------------------------------ binding
    def _bind(self, accountant: "Accountant") -> "Lane":
        if self.lane is None:
            lane = renyi_lane_of(accountant, self.lane_name)
            if lane is None:
                raise InvalidParameter(
                    "this ledger has no Rényi lane: make the accountant with lanes=[…, "
                    "odp.Lane.renyi(epsilon, delta, orders=[…])], or settle by Lemma 11 "
                    "(settlement='lemma11', which needs an ODP lane); nothing was charged")
            self.lane = lane
        return self.lane

    @property
    def share_delta(self) -> Fraction:
        """The δ at which the lane converts each order's budget: δ_j/m."""
        assert self.lane is not None
        return self.lane.delta / len(self.lane.orders)

    def delta_for(self, accountant: "Accountant", delta: Any) -> Fraction:
        lane = self._bind(accountant)
        share = lane.delta / len(lane.orders)
        if delta is None:
            return share
        with budget_error_as(InvalidParameter):
            d = parse_delta(delta, name="delta")
        if d != share:
            raise InvalidParameter(
                f"in the Rényi lane {lane.name!r} the run is charged at the lane's δ "
                f"({format_fraction(share)} per order), not at delta={format_fraction(d)}: "
                "omit delta (epsilon(delta) reports at any δ), or settle by Lemma 11 in the "
                "ODP lane with settlement='lemma11'")
        return d

    # ------------------------------------------------------------------ costs
    def step_cost(self, q: Fraction, sigma: Fraction) -> tuple[Fraction, ...]:
        """One step's RDP at each of the lane's orders (rigorous upper bounds, exact
        rationals), computed once per ``(q, σ)``."""
        from ..rdp import subsampled_gaussian_rdp

        key = (q, sigma)
        if key not in self._step_cost:
            assert self.lane is not None
            self._step_cost[key] = tuple(Fraction(subsampled_gaussian_rdp(q, sigma, a))
                                         for a in self.lane.orders)
        return self._step_cost[key]

    def cost_of(self, schedule: "Schedule") -> tuple[Fraction, ...]:
        """The RDP of ``schedule``'s steps at each of the lane's orders: the phases' step costs
        times their lengths, added (exact)."""
        assert self.lane is not None
        total = [Fraction(0)] * len(self.lane.orders)
        for p in schedule.phases:
            for k, c in enumerate(self.step_cost(p.sampling_rate, p.noise_multiplier)):
                total[k] += p.steps * c
        return tuple(total)

    def epsilon_of(self, cost: tuple[Fraction, ...], delta: Fraction) -> Fraction:
        """The best order's conversion of ``cost`` at ``delta`` (Canonne, Kamath & Steinke 2020,
        Prop. 12; :func:`odp.conversions.rdp_to_dp_epsilon`), as the lane converts."""
        from ..conversions import rdp_to_dp_epsilon

        assert self.lane is not None
        return min(rdp_to_dp_epsilon(a, c, delta) for a, c in zip(self.lane.orders, cost))

    # ------------------------------------------------------------------ the seam
    def _stop_at_or_after(self, steps: int) -> int:
        assert self._run is not None
        return next(k for k in self._run.stops if k >= steps)

    def _pay(self, upto: int) -> None:
        """Charge steps ``paid+1 … upto`` as one lane round (refused: nothing recorded)."""
        run = self._run
        assert run is not None and self.lane is not None and upto > self.paid
        stretch = run.schedule[self.paid:upto]
        cost = self.cost_of(stretch)
        params = {"settlement": self.name, "steps": [self.paid + 1, upto],
                  "phases": stretch.to_json(), "neighbours": run.neighbours.value,
                  "max_steps": run.max_steps, **run.params}
        try:
            curve = [RDP(a, c, neighbours=Neighbours.ADD_REMOVE)  # the subsampled Gaussian's
                     for a, c in zip(self.lane.orders, cost)]
            record = run.accountant.charge(curve, lane=self.lane.name,
                                           mechanism=f"dpsgd[{run.name}]", params=params,
                                           neighbours=run.neighbours)
        except BudgetExceeded as exc:
            then = (f"do not run step {self.paid + 1}: stop() the run, which has paid for the "
                    f"{self.paid} steps before it" if self.paid else "the run cannot start")
            raise BudgetExceeded(
                f"the Rényi lane {self.lane.name!r} refuses steps {self.paid + 1}-{upto} of "
                f"{run.name!r}: {exc}.  Nothing was recorded; {then}",
                requested=exc.requested, remaining=exc.remaining) from None
        self.records.append(record)
        self.spent = tuple(s + c for s, c in zip(self.spent, cost))
        self.paid = upto

    def open(self, run: "TrainingRun") -> None:
        if run.neighbours is not Neighbours.ADD_REMOVE:
            raise InvalidParameter(
                "a Rényi lane charges the Poisson-subsampled Gaussian's RDP curve, an "
                "add/remove bound; for replace-one neighbours settle by Lemma 11 "
                "(settlement='lemma11', group privacy); nothing was charged")
        lane = self._bind(run.accountant)
        self._run = run
        self.spent = tuple(Fraction(0) for _ in lane.orders)
        self._pay(run.stops[0])  # BudgetExceeded: nothing recorded, the run does not start

    def before_steps(self, done: int, count: int) -> None:
        if done + count > self.paid:
            self._pay(self._stop_at_or_after(done + count))

    def charge_at(self, steps: int) -> tuple[int, Fraction]:
        return self.paid, self.epsilon_of(self.spent, self.share_delta)

    def close(self, steps: int) -> RoundRecord:
        # every stretch was paid before it ran: nothing more to charge
        return self.records[-1]

    def abort(self, reason: str) -> RoundRecord:
        # a lane has no refunds: what was paid stays paid, and no unpaid step ran
        return self.records[-1]

    @property
    def reserved(self) -> tuple[Fraction, Fraction]:
        return self.epsilon_of(self.spent, self.share_delta), self.share_delta

    def used(self, steps: int, delta: Fraction) -> Fraction:
        """The lane-side ε of the first ``steps`` steps at ``delta``: their RDP at the lane's
        orders, converted (:meth:`epsilon_of`)."""
        assert self._run is not None
        return self.epsilon_of(self.cost_of(self._run.schedule.prefix(steps)), delta)

    def epsilon(self, run: "TrainingRun", steps: int, delta: Fraction) -> Interval | None:
        """``(lower, upper)``: upper is :meth:`used` (what the lane accounts for these steps),
        lower privacy buckets' lower bound of the tight ε (no analysis can certify less)."""
        upper = self.used(steps, delta)
        return Interval(min(run.tight_epsilon(delta).lower, upper), upper)

    def details(self) -> dict[str, Any]:
        out: dict[str, Any] = {"settlement": self.name}
        if self.lane is not None:
            out["lane"] = self.lane.name
        return out

    @property
    def round_id(self) -> str | None:
        return self.records[-1].round_id if self.records else None
