"""zCDP and fixed-order Rényi DP filters and odometers: plain sums (Haney et al. 2023, Sec. 4).

* RDP of a fixed order α (Thm. 4.6 / 1.22 and Thm. 4.9): CONT iff Σ ε_i(α) ≤ ε; the
  odometer is Σ ε_i(α).  Valid for adaptively chosen parameters and for the *concurrent*
  composition of interactive (α, ε_i)-RDP mechanisms (extending Feldman & Zrnic 2021).  The
  order α is fixed when the filter is built; optimising α after the fact is not covered.
* zCDP (Thm. 4.10 and 4.11): CONT iff Σ ρ_i ≤ ρ; the odometer is Σ ρ_i; concurrent too.
* *Approximate* zCDP ((ρ_i, δ_i) with δ_i > 0): ``ZCDPFilter(rho, delta)`` continues iff
  Σ ρ_i ≤ ρ and Σ δ_i ≤ δ.  This is a **sequential** filter only (Whitehouse et al. 2023, Thm. 1, as
  implemented by OpenDP's ``Approximate<ZeroConcentratedDivergence>``, which marks it
  sequential); there is no concurrent composition theorem for approximate zCDP or RDP
  (Haney et al. 2023, Sec. 4), so :mod:`odp.interactive` refuses such children while another one is
  open.  Approximate RDP is not offered at all.

All sums are exact rationals; costs are converted with :mod:`odp.conversions`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import cast

from .. import conversions as cv
from ..budget import parse_alpha, parse_epsilon
from ..protocols import CostLike, PrivacyCost
from ..rational import ceil_fraction, floor_fraction
from ..errors import InvalidParameter, budget_error_as
from ..guarantees import DP, ODP, RDP, ZCDP
from .base import Accumulator, PrivacyFilter, PrivacyOdometer
from ..types import Number

__all__ = ["ZCDP", "RDP", "ZCDPAccumulator", "RDPAccumulator", "ZCDPFilter", "ZCDPOdometer",
           "RDPFilter", "RDPOdometer"]


def _pure_epsilon(cost: CostLike) -> Fraction | None:
    """ε of a DP/ODP guarantee (or a mechanism's) with δ = 0; None if not such an object."""
    g = cost if isinstance(cost, (DP, ODP)) else getattr(cost, "guarantee", None)
    if not isinstance(g, (DP, ODP)):
        return None
    if g.delta != 0:
        raise InvalidParameter(
            f"{cost!r} is (ε, δ)-DP with δ > 0, which implies no zCDP/RDP bound; declare its "
            "zCDP or RDP guarantee instead")
    return g.sup_epsilon


class ZCDPAccumulator(Accumulator[ZCDP, ZCDP]):
    """G = (Σ ρ_i, Σ δ_i), exact.  Costs: a number (ρ), :class:`ZCDP`, a pure-DP guarantee
    (ρ = ε²/2) or an odp mechanism (:func:`odp.conversions.mechanism_zcdp`)."""

    measure = "zcdp"

    def parse(self, cost: CostLike) -> ZCDP:
        if isinstance(cost, ZCDP):
            return cost
        if hasattr(cost, "release") and hasattr(cost, "guarantee"):
            return ZCDP(cv.mechanism_zcdp(cost))
        eps = _pure_epsilon(cost)
        if eps is not None:
            return ZCDP(cv.pure_dp_to_zcdp(eps))
        return ZCDP(cost)  # type: ignore[arg-type]  # anything else must be a number: ZCDP checks

    def to_cost(self, cost: ZCDP) -> PrivacyCost:
        return cost

    def zero(self) -> ZCDP:
        return ZCDP(0)

    def add(self, state: ZCDP, cost: ZCDP) -> ZCDP:
        return ZCDP._trusted(state.rho + cost.rho, state.delta + cost.delta)

    def loss(self, state: ZCDP) -> ZCDP:
        return state


class RDPAccumulator(Accumulator[Fraction, Fraction]):
    """G = Σ ε_i(α) at the order α fixed at construction, exact.  Costs: a number (ε at α),
    :class:`RDP` at the same α, :class:`ZCDP` with δ = 0 (αρ), a pure-DP guarantee
    (min(ε, αε²/2)), an odp mechanism, or a curve ``alpha -> epsilon`` (called with α)."""

    measure = "rdp"

    def __init__(self, alpha: Number):
        self.alpha = parse_alpha(alpha)

    def parse(self, cost: CostLike) -> Fraction:
        a = self.alpha
        if isinstance(cost, RDP):
            if cost.alpha != a:
                raise InvalidParameter(
                    f"an RDP cost at order {cost.alpha} given to a filter of order {a}: the "
                    "order is fixed when the filter is built (Haney et al. 2023, Thm. 4.6)")
            return cost.epsilon
        if isinstance(cost, ZCDP):
            if cost.approximate:
                raise InvalidParameter("approximate zCDP (δ > 0) has no RDP filter here")
            return cv.zcdp_to_rdp(cost.rho, a)
        if hasattr(cost, "release") and hasattr(cost, "guarantee"):
            from ..mechanisms.noise import GaussianMechanism
            if isinstance(cost, GaussianMechanism):
                return cv.zcdp_to_rdp(cv.mechanism_zcdp(cost), a)
        eps = _pure_epsilon(cost)
        if eps is not None:
            return cv.pure_dp_to_rdp(eps, a)
        if callable(cost):
            value = cost(a)
            with budget_error_as(InvalidParameter):
                return parse_epsilon(value, name=f"the RDP curve's value at α={a}")
        with budget_error_as(InvalidParameter):
            return parse_epsilon(cost)

    def to_cost(self, cost: Fraction) -> PrivacyCost:
        return RDP(self.alpha, cost)

    def zero(self) -> Fraction:
        return Fraction(0)

    def add(self, state: Fraction, cost: Fraction) -> Fraction:
        return state + cost

    def loss(self, state: Fraction) -> RDP:
        return RDP(self.alpha, state)


class ZCDPFilter(PrivacyFilter[ZCDP, ZCDP]):
    """CONT iff Σ ρ_i ≤ ρ (and Σ δ_i ≤ δ): Haney et al. 2023 Thm. 4.10 (δ = 0, concurrent-safe);
    with δ > 0 a sequential approximate-zCDP filter (Whitehouse et al. 2023, Thm. 1)."""

    name = "zCDP filter"

    def __init__(self, rho: Number, delta: Number = 0, *, halt_on_refusal: bool = False):
        self._budget = ZCDP(rho, delta)
        super().__init__(ZCDPAccumulator(), halt_on_refusal=halt_on_refusal)

    @classmethod
    def for_dp(cls, epsilon: Number, delta: Number, *,
               halt_on_refusal: bool = False) -> "ZCDPFilter":
        """The filter with the largest ρ (a multiple of 1e-12, found by bisection) whose
        conversion :func:`odp.conversions.zcdp_to_dp_epsilon` at ``delta`` is at most
        ``epsilon``: the whole interaction is then (ε, δ)-DP."""
        eps = _target_epsilon(epsilon)

        def fits(rho: Fraction) -> bool:
            return cv.zcdp_to_dp_epsilon(rho, delta) <= eps

        lo, hi = Fraction(0), ceil_fraction(eps, _GRID)  # ρ <= conversion(ρ)
        while hi - lo > Fraction(1, _GRID):
            mid = floor_fraction((lo + hi) / 2, _GRID)
            if mid <= lo:
                break
            lo, hi = (mid, hi) if fits(mid) else (lo, mid)
        return cls(lo, halt_on_refusal=halt_on_refusal)

    def dp_epsilon(self, delta: Number) -> Fraction:
        """ε such that the whole interaction, within this budget, is (ε, δ)-DP
        (:func:`odp.conversions.zcdp_to_dp_epsilon` of the budget ρ; δ = 0 budgets only)."""
        return cv.zcdp_to_dp_epsilon(self._budget, delta)

    @property
    def budget(self) -> ZCDP:
        return self._budget

    def _within(self, state: ZCDP) -> bool:
        return state.rho <= self._budget.rho and state.delta <= self._budget.delta

    def remaining(self) -> ZCDP:
        """Exactly (ρ − Σ ρ_i, δ − Σ δ_i)."""
        with self._lock:
            return ZCDP(self._budget.rho - self._state.rho, self._budget.delta - self._state.delta)


class ZCDPOdometer(PrivacyOdometer[ZCDP, ZCDP]):
    """privacy_loss() = ZCDP(Σ ρ_i, Σ δ_i) (Haney et al. 2023 Thm. 4.11)."""

    def __init__(self) -> None:
        super().__init__(ZCDPAccumulator())

    def privacy_loss(self) -> ZCDP:
        return cast(ZCDP, super().privacy_loss())

    def dp_epsilon(self, delta: Number) -> Fraction:
        """The odometer reading as (ε, δ)-DP: :func:`odp.conversions.zcdp_to_dp_epsilon` of
        :meth:`privacy_loss` (δ = 0 costs only).  Like the reading itself, compare it with a
        threshold fixed before the interaction (``ZCDPFilter.for_dp`` enforces one)."""
        return cv.zcdp_to_dp_epsilon(self.privacy_loss(), delta)


class RDPFilter(PrivacyFilter[Fraction, Fraction]):
    """CONT iff Σ ε_i(α) ≤ ε at the fixed order α (Haney et al. 2023 Thm. 4.6; concurrent-safe)."""

    name = "Rényi DP filter"

    def __init__(self, alpha: Number, epsilon: Number, *, halt_on_refusal: bool = False):
        self._budget = RDP(alpha, epsilon)
        super().__init__(RDPAccumulator(self._budget.alpha), halt_on_refusal=halt_on_refusal)

    @classmethod
    def for_dp(cls, alpha: Number, epsilon: Number, delta: Number, *,
               halt_on_refusal: bool = False) -> "RDPFilter":
        """The filter at order α with the largest budget ε_α (a multiple of 1e-12) whose
        conversion :func:`odp.conversions.rdp_to_dp_epsilon` at ``delta`` is at most
        ``epsilon``: the whole interaction is then (α, ε_α)-RDP (Haney et al. 2023 Thm. 4.6), hence
        (ε, δ)-DP.  Raises ``InvalidParameter`` if no budget at that order reaches ε."""
        a = parse_alpha(alpha)
        eps = _target_epsilon(epsilon)
        # ε(b) = max(0, ⌈b + offset⌉) with the offset's upper bound: b + offset <= ⌊ε⌋ suffices
        budget = floor_fraction(floor_fraction(eps, _GRID) - cv.rdp_to_dp_offset(a, delta), _GRID)
        if budget < 0:
            raise InvalidParameter(
                f"no RDP budget at order α={a} converts to ε <= {eps} at δ={delta}: "
                "ln((α−1)/α) − (ln δ + ln α)/(α−1) alone exceeds it; choose another order")
        return cls(a, budget, halt_on_refusal=halt_on_refusal)

    def dp_epsilon(self, delta: Number) -> Fraction:
        """ε such that the whole interaction, within this budget, is (ε, δ)-DP
        (:func:`odp.conversions.rdp_to_dp_epsilon` of the budget)."""
        return cv.rdp_to_dp_epsilon(self._budget, delta)

    @property
    def alpha(self) -> Fraction:
        return self._budget.alpha

    @property
    def budget(self) -> RDP:
        return self._budget

    def _within(self, state: Fraction) -> bool:
        return state <= self._budget.epsilon

    def remaining(self) -> RDP:
        """Exactly (α, ε − Σ ε_i(α))."""
        with self._lock:
            return RDP(self.alpha, self._budget.epsilon - self._state)


class RDPOdometer(PrivacyOdometer[Fraction, Fraction]):
    """privacy_loss() = RDP(α, Σ ε_i(α)) at the fixed order α (Haney et al. 2023 Thm. 4.9)."""

    def __init__(self, alpha: Number):
        super().__init__(RDPAccumulator(alpha))

    def privacy_loss(self) -> RDP:
        return cast(RDP, super().privacy_loss())

    def dp_epsilon(self, delta: Number) -> Fraction:
        """The odometer reading as (ε, δ)-DP with the sound (not optimal) conversion
        :func:`odp.conversions.rdp_to_dp_epsilon` (Canonne–Kamath–Steinke 2020 / Balle et al.
        2020) at the odometer's order.  Like the reading itself, compare it with a threshold
        fixed before the interaction (``RDPFilter.for_dp`` enforces one)."""
        return cv.rdp_to_dp_epsilon(self.privacy_loss(), delta)


_GRID = cv.ROUNDING_DENOMINATOR


def _target_epsilon(epsilon: Number) -> Fraction:
    with budget_error_as(InvalidParameter):
        return parse_epsilon(epsilon)

