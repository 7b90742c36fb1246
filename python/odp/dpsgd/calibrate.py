"""Calibration: the noise multiplier that meets a target (ε, δ), with a rigorous guarantee and a
stated distance to the optimum.

:func:`noise_multiplier` searches the grid ``σ = m·r`` (``r`` the resolution) for the smallest σ
whose **rigorous upper** ε — privacy buckets' upper end (:mod:`odp.buckets`) for the schedule's
dominating pairs — is at most the target.  Running with that σ is therefore
``(target, δ)``-DP (add/remove neighbours), not an estimate of it.

**How close to optimal.**  Let ``σ_opt`` be the smallest σ whose *tight* ε is at most the
target (ε decreases as σ grows: a larger noise multiplier is a post-processing of a smaller
one's pair, see :mod:`odp.buckets.subsampled`).  The returned ``σ*`` has ``upper(σ*) ≤ target``,
so ``σ_opt ≤ σ*``.  If the *lower* end at ``σ* − r`` exceeds the target, no analysis can certify
``σ* − r``, so ``σ_opt > σ* − r``: then ``σ*`` is within ``r`` of the optimum
(:attr:`Calibration.optimal_within` ``= r``).  If that lower end is not above the target (the
interval at ``σ* − r`` straddles it), closeness is undecided at this precision
(``optimal_within = None``) and is said so.

Each σ is first bracketed with a small window (``coarse_buckets``) and recomputed with the
full window only when the coarse interval straddles the target: both intervals are rigorous, so
either decides where it can.

Opacus's ``get_noise_multiplier`` and dp-accounting's ``calibrate_dp_mechanism`` search with
their own ε estimates (RDP, PRV or PLD, with a tolerance in ε); docs/benchmarks.md compares the
σ they return with this one, each judged by odp's rigorous interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..buckets import Interval, PrivacyBucketsAccountant
from ..budget import format_fraction, parse_delta, parse_epsilon, parse_positive
from ..errors import InvalidParameter, budget_error_as
from ..rdp import check_rate
from .schedule import Schedule

__all__ = ["Calibration", "noise_multiplier", "DEFAULT_RESOLUTION"]

#: The default grid of noise multipliers.
DEFAULT_RESOLUTION = Fraction(1, 1000)

#: The search stops doubling above this noise multiplier (no σ below certifies the target).
MAX_NOISE_MULTIPLIER = Fraction(10**4)

#: Window of the first, cheap bracket of each candidate σ.
COARSE_BUCKETS = 8192


@dataclass(frozen=True)
class Calibration:
    """The result of :func:`noise_multiplier`.

    ``noise_multiplier``: ``σ*``, the smallest grid σ with rigorous upper ε ≤ the target (for a
    schedule: the base σ, each phase using ``σ*`` times its factor).  ``epsilon``: the interval
    at ``σ*``.  ``below``: the interval at ``σ* − resolution`` (``None`` when that is not > 0).
    ``optimal_within``: ``resolution`` when ``below.lower > target`` (then the optimal σ lies in
    ``(σ* − resolution, σ*]``), else ``None`` (undecided at this precision).  ``evaluations``:
    how many σ were bracketed."""

    noise_multiplier: Fraction
    epsilon: Interval
    resolution: Fraction
    below: Interval | None
    optimal_within: Fraction | None
    target_epsilon: Fraction
    delta: Fraction
    evaluations: int

    def __float__(self) -> float:
        return float(self.noise_multiplier)

    def statement(self) -> str:
        """One sentence saying what was found and how close to optimal it is."""
        head = (f"noise multiplier {format_fraction(self.noise_multiplier)}: epsilon in "
                f"[{float(self.epsilon.lower):.6f}, {float(self.epsilon.upper):.6f}] <= "
                f"{format_fraction(self.target_epsilon)} at delta {format_fraction(self.delta)}")
        if self.optimal_within is not None:
            return (head + f"; optimal within {format_fraction(self.optimal_within)} (at "
                    f"{format_fraction(self.noise_multiplier - self.resolution)} epsilon is at "
                    f"least {float(self.below.lower):.6f})")  # type: ignore[union-attr]
        return head + "; closeness to the optimum undecided at this precision"


def _schedule(sampling_rate: Any, steps: Any, epochs: Any, schedule: Any) -> Schedule:
    if schedule is not None:
        if sampling_rate is not None or steps is not None or epochs is not None:
            raise InvalidParameter("give a schedule, or sampling_rate with steps or epochs")
        if not isinstance(schedule, Schedule):
            raise InvalidParameter("schedule must be an odp.dpsgd.Schedule (its noise "
                                   "multipliers are factors of the one calibrated)")
        return schedule
    if sampling_rate is None:
        raise InvalidParameter("give sampling_rate (and steps or epochs), or a schedule")
    q = check_rate(sampling_rate)
    if (steps is None) == (epochs is None):
        raise InvalidParameter("give exactly one of steps and epochs")
    if steps is None:
        if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 1:
            raise InvalidParameter(f"epochs must be an integer >= 1, got {epochs!r}")
        steps = epochs * math.ceil(1 / q)
    return Schedule.constant(q, 1, steps)


def noise_multiplier(target_epsilon: Any, delta: Any, sampling_rate: Any = None,
                     steps: int | None = None, *, epochs: int | None = None,
                     schedule: Schedule | None = None, resolution: Any = DEFAULT_RESOLUTION,
                     coarse_buckets: int = COARSE_BUCKETS, **options: Any) -> Calibration:
    """The smallest noise multiplier ``σ = m·resolution`` whose rigorous upper ε at ``delta`` is
    at most ``target_epsilon``, for ``steps`` (or ``epochs`` of ``⌈1/q⌉`` steps) of the
    Poisson-subsampled Gaussian at ``sampling_rate`` — or for a :class:`Schedule` whose noise
    multipliers are factors of the one calibrated.  ``options`` go to
    :class:`odp.buckets.PrivacyBucketsAccountant` (e.g. ``buckets``).  See the module docstring
    for the guarantee and the closeness statement.

    >>> c = noise_multiplier(3.0, 1e-5, 0.01, 10_000)          # doctest: +SKIP
    >>> float(c), c.optimal_within                              # doctest: +SKIP
    """
    with budget_error_as(InvalidParameter):
        target = parse_epsilon(target_epsilon, name="target_epsilon")
        d = parse_delta(delta, name="delta")
    if target == 0 or d == 0:
        raise InvalidParameter("target_epsilon and delta must be > 0")
    res = parse_positive(resolution, name="resolution")
    base = _schedule(sampling_rate, steps, epochs, schedule)
    if isinstance(coarse_buckets, bool) or not isinstance(coarse_buckets, int) or \
            coarse_buckets < 16:
        raise InvalidParameter(f"coarse_buckets must be an integer >= 16, got {coarse_buckets!r}")
    full = PrivacyBucketsAccountant(**options).buckets  # bad options refused before any work
    cache: dict[int, Interval] = {}
    count = [0]

    def interval(m: int) -> Interval:
        """The rigorous ε interval at σ = m·res (coarse first, then full if undecided)."""
        if m not in cache:
            try:
                cache[m] = _interval(m)
            except InvalidParameter:  # e.g. a σ so small the pair cannot be represented
                cache[m] = Interval(Fraction(0), math.inf)
        return cache[m]

    def _interval(m: int) -> Interval:
        sigma = m * res
        sched = Schedule([(p.steps, p.sampling_rate, p.noise_multiplier * sigma)
                          for p in base.phases])
        count[0] += 1
        for window in ((coarse_buckets,) if coarse_buckets < full else ()) + (full,):
            acc = PrivacyBucketsAccountant(**{**options, "buckets": window})
            for mech, n in sched.buckets_mechanisms():
                acc.compose(mech, n)
            out = acc.get_epsilon_interval(d)
            if not out.lower <= target < out.upper:  # decided
                break
        return out

    def feasible(m: int) -> bool:
        return interval(m).upper <= target

    # bracket: lo infeasible (or 0), hi feasible
    hi = max(1, math.ceil(1 / res))  # σ = 1 (rounded up to the grid)
    lo = 0
    while not feasible(hi):
        lo = hi
        hi *= 2
        if hi * res > MAX_NOISE_MULTIPLIER:
            raise InvalidParameter(
                f"no noise multiplier up to {MAX_NOISE_MULTIPLIER} reaches epsilon "
                f"{format_fraction(target)} at delta {format_fraction(d)}")
    if lo == 0:
        while hi > 1:
            mid = hi // 2
            if feasible(mid):
                hi = mid
            else:
                lo = mid
                break
        else:
            lo = 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if feasible(mid):
            hi = mid
        else:
            lo = mid
    below = interval(hi - 1) if hi > 1 else None
    within = res if below is not None and below.lower > target else None
    return Calibration(hi * res, interval(hi), res, below, within, target, d, count[0])
