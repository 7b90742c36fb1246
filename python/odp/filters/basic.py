"""Basic composition as a filter and an odometer, for pure and approximate DP.

* Pure DP (δ_i = 0): Rogers, Roth, Ullman, Vadhan 2016, Thm. 3.4 — for every view the privacy loss
  is at most Σ ε_i with probability 1, so ``Σ ε_i ≤ ε_g`` is a valid filter and Σ ε_i a valid
  odometer, for adaptively chosen ε_i.
* Approximate DP: ``Σ ε_i ≤ ε_g and Σ δ_i ≤ δ_g`` is a valid NIM filter (Rogers et al. 2016, v1
  Lemma 3.5, as used by OpenDP; under the truncated-view definition of Haney et al. 2023 this is
  the basic accumulator G = (Σ ε_i, Σ δ_i)), and by Haney et al. 2023, Thm. 1.20 / Cor. 3.5 also
  a valid filter for the concurrent composition of interactive (ε_i, δ_i)-DP mechanisms with
  finite communication.

Everything is exact rational arithmetic: a budget of 1 admits exactly one thousand rounds of
"0.001" (no floating-point drift: a float sum of a thousand 0.001 is not 1).

Never plug realised, adaptively chosen ε_i into the *advanced* composition theorem: Rogers et al.
(2016) show that heuristic is invalid.  Use :class:`~odp.filters.WhitehouseFilter` instead.
"""

from __future__ import annotations

from fractions import Fraction

from ..budget import Budget, parse_delta, parse_epsilon
from ..errors import InvalidParameter, budget_error_as
from ..guarantees import DP, ODP, GuaranteeRecord
from .base import Accumulator, PrivacyFilter, PrivacyOdometer
from ..types import Number
from ..protocols import CostLike, PrivacyCost

__all__ = ["parse_dp_cost", "BasicAccumulator", "BasicFilter", "BasicOdometer"]

DPCost = tuple[Fraction, Fraction]


def parse_dp_cost(cost: CostLike) -> DPCost:
    """``(ε, δ)`` from a number (δ = 0), an ``(ε, δ)`` pair, an :class:`odp.Budget`, an
    :class:`odp.DP`, an :class:`odp.ODP` (Lemma 4: its sup and δ) or a mechanism declaring one
    of those as ``.guarantee``."""
    if isinstance(cost, tuple) and len(cost) == 2:
        eps, dlt = cost
        if isinstance(eps, Fraction) and isinstance(dlt, Fraction) and eps >= 0 and 0 <= dlt < 1:
            return eps, dlt
    with budget_error_as(InvalidParameter, "not a valid (ε, δ) cost: "):
        if isinstance(cost, Budget):
            return cost.epsilon, cost.delta
        if isinstance(cost, (DP, ODP, GuaranteeRecord)):
            return cost.sup_epsilon, cost.delta
        guarantee = getattr(cost, "guarantee", None)
        if isinstance(guarantee, (DP, ODP)):
            return guarantee.sup_epsilon, guarantee.delta
        if isinstance(cost, (tuple, list)):
            if len(cost) != 2:
                raise InvalidParameter(f"an (ε, δ) cost needs two numbers, got {cost!r}")
            return parse_epsilon(cost[0]), parse_delta(cost[1])
        return parse_epsilon(cost), Fraction(0)


class BasicAccumulator(Accumulator[DPCost, DPCost]):
    """G((ε_1, δ_1), …) = (Σ ε_i, Σ δ_i), exact."""

    measure = "approx-dp"

    def parse(self, cost: CostLike) -> DPCost:
        return parse_dp_cost(cost)

    def to_cost(self, cost: DPCost) -> PrivacyCost:
        return DP(cost[0], cost[1])

    def zero(self) -> DPCost:
        return Fraction(0), Fraction(0)

    def add(self, state: DPCost, cost: DPCost) -> DPCost:
        return state[0] + cost[0], state[1] + cost[1]

    def loss(self, state: DPCost) -> Budget:
        return Budget._trusted(state[0], state[1])


class BasicFilter(PrivacyFilter[DPCost, DPCost]):
    """CONT iff Σ ε_i ≤ ε_g and Σ δ_i ≤ δ_g (product order), exactly.

    ``delta=0`` (the default) is the pure-DP filter of Rogers et al. 2016, Thm. 3.4: any request
    with δ_i > 0 is then refused.  Costs: see :func:`parse_dp_cost`.
    """

    name = "basic composition filter"

    def __init__(self, epsilon: Number, delta: Number = 0, *, halt_on_refusal: bool = False):
        self._budget = Budget(epsilon, delta)
        super().__init__(BasicAccumulator(), halt_on_refusal=halt_on_refusal)

    @property
    def budget(self) -> Budget:
        return self._budget

    def _within(self, state: DPCost) -> bool:
        return state[0] <= self._budget.epsilon and state[1] <= self._budget.delta

    def remaining(self) -> Budget:
        """Exactly (ε_g − Σ ε_i, δ_g − Σ δ_i): the largest request still accepted."""
        with self._lock:
            return Budget._trusted(self._budget.epsilon - self._state[0],
                                   self._budget.delta - self._state[1])


class BasicOdometer(PrivacyOdometer[DPCost, DPCost]):
    """privacy_loss() = (Σ ε_i, Σ δ_i) as an exact :class:`odp.Budget` (Rogers et al.
    2016, Thm. 3.4; Haney et al. 2023, Thm. 1.20)."""

    def __init__(self) -> None:
        super().__init__(BasicAccumulator())
