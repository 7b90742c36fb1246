"""Composition theorems (COMP of Lemma 11) for the Poisson-subsampled Gaussian steps of a
:class:`~odp.dpsgd.schedule.Schedule`.

* :class:`ScheduleRDP` — Rényi DP: each phase's curve (Mironov, Talwar & Zhang 2019, evaluated
  as rigorous upper bounds by :func:`odp.rdp.subsampled_gaussian_rdp`) times its number of
  steps, added over the phases at every order (Mironov 2017, Prop. 1), converted to (ε, δ) by
  the conversion of Canonne, Kamath & Steinke 2020, Prop. 12 (sound; tighter than Mironov's, not
  tight).  Default orders: the integers of :data:`odp.subsampled_rdp.INTEGER_ORDERS` (2…64 and
  a few larger; the integer-order value is a closed sum, fast); ``orders=odp.rdp.DEFAULT_ORDERS``
  adds dp-accounting's fractional ones (slightly tighter: ε = 5.632 instead of 5.654 for
  q = 0.01, σ = 1.1, 10⁴ steps at δ = 10⁻⁵; their series costs up to seconds per (q, σ)).
* :class:`ScheduleBuckets` — privacy buckets (Meiser & Mohammadi 2018; :mod:`odp.buckets`): the
  phases' dominating pairs (:class:`odp.buckets.PoissonSubsampled`) composed in order, a
  rigorous *interval* around the tight δ(ε) and ε(δ).  Prefixes asked for in increasing length
  (the stops of Lemma 11, the steps of a training loop) are composed incrementally: only the
  steps added since the last query are composed.

Both hold for add/remove neighbours; wrap one in :class:`odp.composition.ReplaceOneComposition`
for replace-one neighbours.  Both take a :class:`~odp.dpsgd.schedule.Schedule` (or any sequence
of ``subsampled_gaussian`` :class:`~odp.composition.StepSpec`) wherever the base classes take the
steps.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Sequence

from ..buckets import Interval, PrivacyBucketsAccountant
from ..budget import parse_delta, parse_epsilon
from ..composition import BucketsComposition, RDPComposition, StepSpec
from ..errors import InvalidParameter
from ..rdp import subsampled_gaussian_rdp
from .schedule import Schedule, as_schedule

__all__ = ["ScheduleRDP", "ScheduleBuckets", "composition_of", "COMPOSITIONS"]

#: :class:`ScheduleBuckets` extends its accountant for a longer prefix only up to this many
#: times the length it was made for (the tilt of its round-off bounds is chosen for that
#: length; far longer compositions get a fresh accountant and tilt).
REFRESH_FACTOR = 2

#: The names :func:`composition_of` accepts.
COMPOSITIONS = ("rdp", "buckets")


class ScheduleRDP(RDPComposition):
    """RDP as COMP for a schedule (module docstring).  ``orders``: the Rényi orders (default
    :data:`odp.subsampled_rdp.INTEGER_ORDERS`; :data:`odp.rdp.DEFAULT_ORDERS` adds fractional
    ones)."""

    name = "rdp"

    def __init__(self, orders: Sequence[Any] | None = None):
        super().__init__(orders)

    def curve(self, steps: Sequence[StepSpec]) -> dict[Fraction, Fraction]:
        """``{α: Σ_phases steps · ε_phase(α)}`` (upper bounds, exact sums)."""
        schedule = as_schedule(steps)
        return {a: sum((subsampled_gaussian_rdp(p.sampling_rate, p.noise_multiplier, a, p.steps)
                        for p in schedule.phases), Fraction(0))
                for a in self.orders}

    def check(self, steps: Sequence[StepSpec]) -> None:
        as_schedule(steps)


class ScheduleBuckets(BucketsComposition):
    """Privacy buckets as COMP for a schedule (module docstring).  ``options`` go to
    :class:`odp.buckets.PrivacyBucketsAccountant` (``buckets``, ``precision``, …); ``horizon``:
    the longest schedule it will be asked about (the tilt of the round-off bounds is then
    chosen for it; default: for the schedule of the first query)."""

    name = "privacy-buckets"

    def __init__(self, *, horizon: Schedule | None = None, **options: Any):
        super().__init__(**options)
        self.horizon = horizon
        self._acc: PrivacyBucketsAccountant | None = None
        self._done: Schedule | None = None  # the prefix composed in ``_acc``
        self._base = 0  # its length when ``_acc`` was made

    def check(self, steps: Sequence[StepSpec]) -> None:
        as_schedule(steps)

    def accountant(self, steps: Sequence[StepSpec]) -> PrivacyBucketsAccountant:
        """A privacy-buckets accountant holding exactly ``steps``: the last one extended by the
        steps added since (when ``steps`` extends what it holds), else a new one."""
        schedule = as_schedule(steps)
        done = self._done
        if self._acc is None or done is None or len(schedule) < len(done) or \
                len(schedule) > REFRESH_FACTOR * self._base or \
                schedule.prefix(len(done)) != done:
            # the tilt of the round-off bounds is chosen once per accountant, for the longest
            # schedule it will be asked about (``horizon``) when known, else for this one; a
            # schedule more than REFRESH_FACTOR times longer gets a new accountant
            tilt_for = None if self.horizon is None else self.horizon.buckets_mechanisms()
            self._acc = PrivacyBucketsAccountant(**{"tilt_for": tilt_for, **self.options})
            self._done = None
            self._base = len(schedule)
            rest = schedule
        elif len(schedule) == len(done):
            return self._acc
        else:
            rest = schedule[len(done):]
        acc = self._acc
        for mech, count in rest.buckets_mechanisms():
            acc.compose(mech, count)
        self._done = schedule
        return acc

    def interval(self, steps: Sequence[StepSpec], delta: Any) -> Interval:
        """The rigorous interval ``(lower, upper)`` around the tight ε of ``steps`` at ``delta``."""
        return self.accountant(steps).get_epsilon_interval(parse_delta(delta))

    def delta_upper(self, steps: Sequence[StepSpec], epsilon: Fraction) -> Fraction:
        up = self.accountant(steps).get_delta_interval(parse_epsilon(epsilon)).upper
        if up >= 1:
            raise InvalidParameter(f"privacy buckets certifies no δ < 1 at ε = {epsilon} for "
                                   f"these {len(steps)} steps: raise ε or the noise")
        return Fraction(up)

    def epsilon_upper(self, steps: Sequence[StepSpec], delta: Fraction) -> Fraction:
        acc = self.accountant(steps)
        up = acc.get_epsilon_interval(parse_delta(delta)).upper
        if not isinstance(up, Fraction):
            raise InvalidParameter(acc.no_finite_epsilon_reason(delta))
        return up


def composition_of(value: Any) -> RDPComposition | BucketsComposition:
    """``"rdp"`` → :class:`ScheduleRDP`, ``"buckets"`` → :class:`ScheduleBuckets`, or an instance
    of either, as is."""
    if isinstance(value, (ScheduleRDP, ScheduleBuckets)):
        return value
    if value == "rdp":
        return ScheduleRDP()
    if value == "buckets":
        return ScheduleBuckets()
    raise InvalidParameter(f"composition must be one of {COMPOSITIONS} or a ScheduleRDP / "
                           f"ScheduleBuckets instance, got {value!r}")
