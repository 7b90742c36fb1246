"""The Whitehouse–Ramdas–Rogers–Wu (ε, δ) filter and its odometer (Haney et al. 2023, Thm. 3.7 and
Thm. 3.8 / B.4; Whitehouse, Ramdas, Rogers, Wu 2023, "Fully Adaptive Composition in Differential
Privacy", Thm. 3.2).

For a budget (ε, δ) and a split δ = δ′ + δ″ with δ″ > 0 ("``tail_delta``", the probability
that the privacy-loss martingale escapes its bound; it sits inside the logarithm):

    CONT  iff  √(2·ln(1/δ″)·Σ ε_i²) + ½·Σ ε_i²  ≤  ε   and   Σ δ_i  ≤  δ − δ″.

This is a valid (ε, δ)-DP continuation rule for adaptively chosen (ε_i, δ_i)-DP mechanisms,
non-interactive and (Haney et al. 2023, Cor. 3.5) interactive with finite communication.  The
accumulator of Thm. 3.8 is

    G = ( √(2·ln(1/δ″)·Σ ε_i²) + ½·Σ ε_i² ,  δ″ + Σ δ_i ),

a valid odometer under the truncated-view definition of Haney et al. 2023 (compare its reading
against a threshold fixed in advance; it is *not* a Rogers et al. (2016)-style simultaneous ex-post
bound).

Exact decision.  f(S) = √(2LS) + S/2 is strictly increasing in S = Σ ε_i², so the ε-condition
is S ≤ S_max with S_max = (√(2L + 2ε) − √(2L))², L = ln(1/δ″).  S is an exact rational; S_max
is enclosed in a rational bracket [S_lo, S_hi] (width ~1e-45) at construction.  S ≤ S_lo
continues, S > S_hi halts, and the rare S in between is decided by the direct test
2·L·S ≤ (ε − S/2)² with L bracketed ever more tightly; if still undecided, the filter refuses.
(For rational δ″ ≠ 1, L is irrational and a tie is impossible unless S = 0.)

Compared with the basic filter this admits ~ (ε/ε_i)² / (2 ln(1/δ″)) rounds of ε_i instead of
ε/ε_i, i.e. more only when ε_i is small; for ε_i = 0.1, ε = 1, δ″ = 1e-5 it admits 4 rounds
where basic composition admits 10.

The advanced filter of Rogers, Roth, Ullman, Vadhan 2016 (§5) is deliberately *not* offered: its
constants (the 28.04 term and the arguments of its logarithms, and the handling of δ_i > 0 after the
Hartmann correction) could not be confirmed against the full paper, and public
implementations disagree on them.
"""

from __future__ import annotations

from fractions import Fraction

from ..budget import Budget, parse_delta
from ..errors import InvalidParameter
from ..protocols import CostLike, PrivacyCost
from ..rational import (
    DEFAULT_DENOMINATOR,
    ceil_fraction,
    floor_fraction,
    log_bracket,
    sqrt_bracket,
)
from ..guarantees import DP
from .base import Accumulator, PrivacyFilter, PrivacyOdometer
from .basic import DPCost, parse_dp_cost
from ..types import Number

__all__ = ["WhitehouseAccumulator", "WhitehouseFilter", "WhitehouseOdometer"]

_DIGITS = 50
_MAX_DIGITS = 1600


def _parse_tail_delta(tail_delta: Number) -> Fraction:
    d = parse_delta(tail_delta, name="tail_delta")
    if d == 0:
        raise InvalidParameter("tail_delta (δ″ of Haney et al. 2023 Thm. 3.7) must be > 0")
    return d


class _Log:
    """ln(1/δ″) with a cached rational bracket that can be refined."""

    def __init__(self, tail_delta: Fraction):
        self.x = 1 / tail_delta
        self.digits = _DIGITS
        self.lo, self.hi = log_bracket(self.x, self.digits)

    def refine(self) -> bool:
        if self.digits >= _MAX_DIGITS:
            return False
        self.digits *= 2
        self.lo, self.hi = log_bracket(self.x, self.digits)
        return True


class WhitehouseAccumulator(Accumulator[DPCost, DPCost]):
    """State (Σ ε_i², Σ δ_i); loss = Thm. 3.8's G, with its ε rounded up to 1e-12."""

    measure = "approx-dp"

    def __init__(self, tail_delta: Number):
        self.tail_delta = _parse_tail_delta(tail_delta)
        self.log = _Log(self.tail_delta)

    def parse(self, cost: CostLike) -> DPCost:
        return parse_dp_cost(cost)

    def to_cost(self, cost: DPCost) -> PrivacyCost:
        return DP(cost[0], cost[1])

    def zero(self) -> DPCost:
        return Fraction(0), Fraction(0)

    def add(self, state: DPCost, cost: DPCost) -> DPCost:
        return state[0] + cost[0] * cost[0], state[1] + cost[1]

    def epsilon_upper(self, sum_sq: Fraction) -> Fraction:
        """An upper bound on √(2·ln(1/δ″)·S) + S/2, rounded up to the grid 1e-12."""
        if sum_sq == 0:
            return Fraction(0)
        root_hi = sqrt_bracket(2 * self.log.hi * sum_sq)[1]
        return ceil_fraction(root_hi + sum_sq / 2, DEFAULT_DENOMINATOR)

    def loss(self, state: DPCost) -> Budget:
        """(ε upper bound, δ″ + Σ δ_i) — Haney et al. 2023 Thm. 3.8."""
        return Budget._trusted(self.epsilon_upper(state[0]), self.tail_delta + state[1])


class WhitehouseFilter(PrivacyFilter[DPCost, DPCost]):
    """The (ε, δ)-DP filter of Haney et al. 2023 Thm. 3.7 (Whitehouse et al. 2023).

    Parameters
    ----------
    epsilon, delta:
        The budget (ε, δ) of the whole interaction.
    tail_delta:
        δ″ ∈ (0, δ]: the part of δ spent on the concentration bound (inside the log); the rest,
        δ − δ″, bounds Σ δ_i.
    """

    name = "Whitehouse et al. filter"

    def __init__(self, epsilon: Number, delta: Number, tail_delta: Number, *,
                 halt_on_refusal: bool = False):
        self._budget = Budget(epsilon, delta)
        acc = WhitehouseAccumulator(tail_delta)
        if acc.tail_delta > self._budget.delta:
            raise InvalidParameter(
                f"tail_delta={acc.tail_delta} exceeds the budget's delta={self._budget.delta}: "
                "the filter could never continue; choose 0 < tail_delta <= delta"
            )
        super().__init__(acc, halt_on_refusal=halt_on_refusal)
        self._wacc = acc
        self._delta_rounds = self._budget.delta - acc.tail_delta
        self._smax = self._smax_bracket()

    @property
    def budget(self) -> Budget:
        return self._budget

    @property
    def tail_delta(self) -> Fraction:
        return self._wacc.tail_delta

    def _smax_bracket(self) -> tuple[Fraction, Fraction]:
        """[S_lo, S_hi] ∋ S_max = (√(2L + 2ε) − √(2L))² by interval arithmetic."""
        log = self._wacc.log
        eps = self._budget.epsilon
        a_lo = sqrt_bracket(2 * log.lo + 2 * eps, log.digits)[0]
        a_hi = sqrt_bracket(2 * log.hi + 2 * eps, log.digits)[1]
        b_lo = sqrt_bracket(2 * log.lo, log.digits)[0]
        b_hi = sqrt_bracket(2 * log.hi, log.digits)[1]
        u_lo = max(a_lo - b_hi, Fraction(0))
        u_hi = max(a_hi - b_lo, Fraction(0))
        return u_lo * u_lo, u_hi * u_hi

    def _epsilon_ok(self, s: Fraction) -> bool:
        s_lo, s_hi = self._smax
        if s <= s_lo:
            return True
        if s > s_hi:
            return False
        # Undecided by the bracket of S_max: decide 2·L·S ≤ (ε − S/2)² directly.
        room = self._budget.epsilon - s / 2
        if room < 0:
            return False
        if s == 0:
            return True
        log = self._wacc.log
        while True:
            if 2 * log.hi * s <= room * room:
                return True
            if 2 * log.lo * s > room * room:
                return False
            if not log.refine():
                return False  # undecidable at the precision cap: refuse (never over-spend)

    def _within(self, state: DPCost) -> bool:
        return state[1] <= self._delta_rounds and self._epsilon_ok(state[0])

    def max_rounds(self, epsilon_i: Number) -> int:
        """How many rounds of (ε_i, 0) this filter admits from empty (⌊S_max/ε_i²⌋, decided
        exactly)."""
        e = parse_dp_cost(epsilon_i)[0]
        if e == 0:
            raise InvalidParameter("epsilon_i must be > 0")
        e2 = e * e
        k = int(self._smax[0] / e2)
        while self._epsilon_ok((k + 1) * e2):
            k += 1
        while k > 0 and not self._epsilon_ok(k * e2):
            k -= 1
        return k

    def remaining(self) -> Budget:
        """(a lower bound on the largest ε_next with (ε_next, 0) still accepted, rounded down
        to 1e-12; exactly δ − δ″ − Σ δ_i)."""
        with self._lock:
            s, d = self._state
            s_lo = self._smax[0]
            eps_next = Fraction(0)
            if s < s_lo:
                eps_next = floor_fraction(sqrt_bracket(s_lo - s)[0], DEFAULT_DENOMINATOR)
            return Budget._trusted(eps_next, max(self._delta_rounds - d, Fraction(0)))


class WhitehouseOdometer(PrivacyOdometer[DPCost, DPCost]):
    """privacy_loss() = (√(2 ln(1/δ″) Σ ε_i²) + ½ Σ ε_i², δ″ + Σ δ_i), Haney et al. 2023 Thm. 3.8,
    as an :class:`odp.Budget` whose ε is an upper bound (rounded up to 1e-12)."""

    def __init__(self, tail_delta: Number):
        super().__init__(WhitehouseAccumulator(tail_delta))
