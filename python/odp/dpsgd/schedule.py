"""Training schedules: which sampling rate and noise multiplier each DP-SGD step uses.

A :class:`Schedule` is a sequence of *phases*, each ``(steps, q, σ)``: ``steps`` consecutive
steps of the Poisson-subsampled Gaussian mechanism with sampling rate ``q`` and noise multiplier
``σ`` (the noise's standard deviation is ``σ`` times the clipping norm; add/remove neighbours).
A constant run is one phase; a per-epoch schedule (a decaying σ, a growing batch) is one phase per
epoch; a per-step schedule is run-length encoded, so equal consecutive steps cost nothing extra.

It is a ``Sequence`` of :class:`odp.composition.StepSpec` (step ``k`` is ``schedule[k - 1]``;
``schedule[:k]`` is the schedule of the first ``k`` steps), so every
:class:`~odp.composition.PrefixComposition` and :class:`~odp.composition.PrefixDeltaSum` accepts it; the
compositions of :mod:`odp.dpsgd.compositions` read its phases directly (their cost grows with the
number of phases, not of steps).  Each step's description is
``{"mechanism": "subsampled_gaussian", "q": …, "sigma": …}`` (:func:`odp.composition.step_rdp`;
its privacy-buckets pair is :func:`odp.buckets.poisson_gaussian`).

The privacy of a schedule is that of the composition of its steps in order (Mironov 2017,
Prop. 1 for RDP; Zhu, Dong & Wang 2022 for the dominating pairs of privacy buckets): the
parameters are fixed before training (public), not chosen from the data.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable, Iterator, Sequence, overload

from ..composition import StepSpec
from ..neighbours import Neighbours
from ..errors import InvalidParameter
from ..rdp import check_rate, check_sigma

__all__ = ["Phase", "Schedule", "MAX_STEPS"]

#: The most steps a schedule may have (a larger count is a unit mistake, not a training run).
MAX_STEPS = 10**9


@dataclass(frozen=True)
class Phase:
    """``steps`` consecutive steps with sampling rate ``sampling_rate`` and noise multiplier
    ``noise_multiplier`` (exact rationals)."""

    steps: int
    sampling_rate: Fraction
    noise_multiplier: Fraction

    def to_json(self) -> dict[str, Any]:
        return {"steps": self.steps, "sampling_rate": str(self.sampling_rate),
                "noise_multiplier": str(self.noise_multiplier)}


def _count(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidParameter(f"{name} must be an integer >= 1, got {value!r}")
    if value > MAX_STEPS:
        raise InvalidParameter(f"{name} = {value:,} is above the limit of {MAX_STEPS:,} steps")
    return value


class Schedule(Sequence[StepSpec]):
    """The steps of a DP-SGD run as phases ``(steps, sampling_rate, noise_multiplier)``.

    >>> s = Schedule([(100, "1/100", "1.1"), (200, "1/50", "1.3")])
    >>> len(s), len(s[:150].phases)
    (300, 2)
    """

    def __init__(self, phases: Iterable[Phase | tuple[Any, Any, Any]]):
        out: list[Phase] = []
        for i, item in enumerate(phases):
            if isinstance(item, Phase):
                steps, q, sigma = item.steps, item.sampling_rate, item.noise_multiplier
            elif isinstance(item, (tuple, list)) and len(item) == 3:
                steps, q, sigma = item
            else:
                raise InvalidParameter(
                    f"phase {i} is {item!r}: each phase is (steps, sampling_rate, "
                    "noise_multiplier)")
            steps = _count(steps, f"the steps of phase {i}")
            q, sigma = check_rate(q), check_sigma(sigma)
            if out and out[-1].sampling_rate == q and out[-1].noise_multiplier == sigma:
                out[-1] = Phase(out[-1].steps + steps, q, sigma)  # run-length encoded
            else:
                out.append(Phase(steps, q, sigma))
        if not out:
            raise InvalidParameter("a schedule needs at least one phase")
        total = sum(p.steps for p in out)
        if total > MAX_STEPS:
            raise InvalidParameter(f"the schedule has {total:,} steps, above the limit of "
                                   f"{MAX_STEPS:,}")
        self.phases: tuple[Phase, ...] = tuple(out)
        self._len = total
        self._specs: dict[tuple[Fraction, Fraction], StepSpec] = {}

    # ------------------------------------------------------------------ constructors
    @classmethod
    def constant(cls, sampling_rate: Any, noise_multiplier: Any, steps: int) -> "Schedule":
        """``steps`` steps with the same ``q`` and ``σ``."""
        return cls([(steps, sampling_rate, noise_multiplier)])

    @classmethod
    def per_step(cls, steps: Iterable[tuple[Any, Any]]) -> "Schedule":
        """One ``(sampling_rate, noise_multiplier)`` pair per step (run-length encoded)."""
        return cls([(1, q, sigma) for q, sigma in steps])

    @classmethod
    def per_epoch(cls, epochs: Iterable[tuple[Any, Any]], *,
                  steps_per_epoch: int | None = None) -> "Schedule":
        """One ``(sampling_rate, noise_multiplier)`` pair per epoch; an epoch is
        ``steps_per_epoch`` steps, by default ``⌈1/q⌉`` for its own ``q``."""
        phases = []
        for q, sigma in epochs:
            rate = check_rate(q)
            n = (math.ceil(1 / rate) if steps_per_epoch is None
                 else _count(steps_per_epoch, "steps_per_epoch"))
            phases.append((n, rate, sigma))
        return cls(phases)

    # ------------------------------------------------------------------ sequence protocol
    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> StepSpec: ...

    @overload
    def __getitem__(self, index: slice) -> "Schedule": ...

    def __getitem__(self, index: int | slice) -> "StepSpec | Schedule":
        if isinstance(index, slice):
            start, stop, stride = index.indices(self._len)
            if stride != 1 or stop <= start:
                raise InvalidParameter("a schedule slices into consecutive steps only")
            return self._window(start, stop)
        if isinstance(index, bool) or not isinstance(index, int):
            raise TypeError("schedule indices are integers or slices")
        k = index + self._len if index < 0 else index
        if not 0 <= k < self._len:
            raise IndexError(index)
        return self.spec(self.phase_of(k + 1))

    def __iter__(self) -> Iterator[StepSpec]:
        for p in self.phases:
            spec = self.spec(p)
            for _ in range(p.steps):
                yield spec

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schedule) and self.phases == other.phases

    def __hash__(self) -> int:
        return hash(self.phases)

    def __repr__(self) -> str:
        inner = ", ".join(f"({p.steps}, {p.sampling_rate}, {p.noise_multiplier})"
                          for p in self.phases[:4])
        more = f", … {len(self.phases) - 4} more" if len(self.phases) > 4 else ""
        return f"Schedule([{inner}{more}])"

    def _window(self, start: int, stop: int) -> "Schedule":
        """The steps ``start+1 … stop`` (0-based half-open ``[start, stop)``)."""
        out = []
        pos = 0
        for p in self.phases:
            lo, hi = max(start, pos), min(stop, pos + p.steps)
            if lo < hi:
                out.append(Phase(hi - lo, p.sampling_rate, p.noise_multiplier))
            pos += p.steps
        return Schedule(out)

    # ------------------------------------------------------------------ queries
    def prefix(self, steps: int) -> "Schedule":
        """The schedule of the first ``steps`` steps (``1 <= steps <= len``)."""
        if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= self._len:
            raise InvalidParameter(f"a prefix has between 1 and {self._len} steps, got {steps!r}")
        return self._window(0, steps)

    def phase_of(self, step: int) -> Phase:
        """The phase of step ``step`` (1-based)."""
        pos = 0
        for p in self.phases:
            pos += p.steps
            if step <= pos:
                return p
        raise IndexError(step)

    def spec(self, phase: Phase) -> StepSpec:
        """The :class:`~odp.composition.StepSpec` of one step of ``phase``: its description and a
        valid (ε, δ)-DP guarantee of that one step (for composition theorems that need one;
        the ones of :mod:`odp.dpsgd.compositions` read the description only).  The δ is
        ``10⁻¹²``; the ε is the RDP bound at integer orders (:func:`odp.rdp.
        subsampled_gaussian_epsilon`), computed once per phase."""
        key = (phase.sampling_rate, phase.noise_multiplier)
        if key not in self._specs:
            from ..rdp import subsampled_gaussian_epsilon
            from ..subsampled_rdp import INTEGER_ORDERS

            delta = Fraction(1, 10**12)
            eps = subsampled_gaussian_epsilon(phase.sampling_rate, phase.noise_multiplier, 1,
                                              delta, orders=INTEGER_ORDERS)[0]
            self._specs[key] = StepSpec(eps, delta, describe(phase))
        return self._specs[key]

    def buckets_mechanisms(self) -> list[tuple[Any, int]]:
        """``[(poisson_gaussian(σ, q), steps), …]`` for :mod:`odp.buckets`."""
        from ..buckets import poisson_gaussian

        return [(poisson_gaussian(p.noise_multiplier, p.sampling_rate), p.steps)
                for p in self.phases]

    def to_json(self) -> list[dict[str, Any]]:
        return [p.to_json() for p in self.phases]


def describe(phase: Phase) -> dict[str, Any]:
    """A step's description for :attr:`odp.composition.StepSpec.mechanism`."""
    return {"mechanism": "subsampled_gaussian", "q": str(phase.sampling_rate),
            "sigma": str(phase.noise_multiplier), "neighbours": Neighbours.ADD_REMOVE.value}


def as_schedule(steps: Sequence[StepSpec]) -> Schedule:
    """A :class:`Schedule` for ``steps``: itself, or the run-length encoding of a sequence of
    ``subsampled_gaussian`` step specs (anything else is refused)."""
    if isinstance(steps, Schedule):
        return steps
    phases: list[tuple[int, Fraction, Fraction]] = []
    last: Any = None
    for step in steps:
        mech = step.mechanism
        if mech is None or mech.get("mechanism") != "subsampled_gaussian":
            raise InvalidParameter(
                "this composition analyses Poisson-subsampled Gaussian steps "
                f"('subsampled_gaussian'); got the step {step.to_json()}")
        if step is last or (last is not None and mech == last.mechanism):
            n, q, s = phases[-1]
            phases[-1] = (n + 1, q, s)
        else:
            phases.append((1, check_rate(mech["q"]), check_sigma(mech["sigma"])))
        last = step
    return Schedule(phases)
