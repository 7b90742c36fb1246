"""Iterative mechanisms with early stopping (paper 002, Sec. 5: Alg. 3, Lemma 11).

:class:`IterativeMechanism` runs steps ``s_k = M_k((s_1, …, s_{k−1}), x)`` for
``k = 1 … k_n`` and, after each stopping point ``k_i < k_n``, evaluates the stopping rule
``h^{k_i}(s_1, …, s_{k_i})`` on the released outputs only; if it fires, the mechanism returns
``(s_1, …, s_{k_i})``.  Its ODP partition is the output length (class label ``k_i``, an int),
with cost ``ℰ(P_i) = ε^{k_i}`` — by default the basic-composition prefix sum
``Σ_{k ≤ k_i} ε_k`` — and one δ computed by a pluggable rule (:mod:`odp.composition`):
Lemma 11 with basic composition (default), Lemma 11 with privacy buckets, or OptDel (Thm. 15).
Stopping early is charged ``ε^{k_i}`` instead of ``ε^{k_n}``: the rest is returned.

A stopping rule that needs the data must be made a DP step itself (Sec. 5: append the
mechanism computing it to the steps).

:class:`NoisyGradientDescent` is the example of Sec. 5: gradient descent for L2-regularised
logistic regression whose gradients are released with discrete Laplace noise (each step
ε_k-DP, δ_k = 0), stopping when the norm of the (averaged) noisy gradient falls below a
threshold.

**Step privacy of the noisy gradient.**  Each record's gradient of the logistic loss is clipped
to L1 norm ``C``; the mean over the public number ``n`` of records then changes by at most
``2C/n`` in L1 norm when one record is replaced.  The mean is put on the grid ``g·ℤ^d``
coordinate-wise with ``⌊v/g + 1/2⌋``, which moves each coordinate by less than one unit more,
so the integer vectors of neighbours differ by at most ``m = ⌈(2C/n)(1 + 10⁻⁹)/g⌉ + d`` in L1
norm (the factor 1 + 10⁻⁹ covers the floating-point error of the clipped, ``math.fsum``-summed
mean, which is below 10⁻¹² relative).  Independent discrete Laplace noise of scale ``m/ε_k``
per coordinate is then ε_k-DP (the product of the per-coordinate ratios is at most
``exp(‖Δ‖₁ ε_k/m)``).  The regulariser's gradient ``Λw`` does not depend on the data and is
added after the noise (post-processing).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

import numpy as np

from ..budget import parse_epsilon, to_fraction
from ..composition import (
    DeltaRule,
    StepSpec,
    expand_steps,
    iterative_guarantee,
    output_length,
    parse_stops,
)
from ..errors import InvalidParameter
from ..guarantees import ODP
from ..samplers import RandomSource, discrete_laplace
from .base import Mechanism

__all__ = [
    "IterativeMechanism",
    "NoisyGradientDescent",
    "GradientDescentRelease",
    "logistic_gradients",
    "output_length",
]

Step = Callable[[tuple, Any, RandomSource], Any]
StoppingRule = Callable[[tuple], bool]


class IterativeMechanism(Mechanism):
    """Alg. 3 with a declared (𝒫, ℰ, δ)-ODP guarantee (Lemma 11 / Thm. 15).

    Parameters
    ----------
    step:
        ``step(history, data, rng) -> s_k``: the k-th mechanism, given the outputs so far.  It
        must be (ε_k, δ_k)-DP as described by ``steps`` and draw all randomness from ``rng``.
    stops:
        The stopping points ``k_1 < … < k_n``; the mechanism never runs more than ``k_n`` steps.
    steps:
        One :class:`odp.composition.StepSpec` for every step, or one for all.
    stopping_rule:
        ``h(history) -> bool`` evaluated after each ``k_i < k_n`` on the released outputs only
        (default: never stop early).
    costs:
        ``ℰ(P_i)`` per stop (default: the prefix sums of the step ε's).
    rule:
        The δ rule (:class:`odp.composition.Lemma11`, :class:`~odp.composition.OptDel`, …).
    """

    name = "iterative"

    def __init__(self, step: Step, *, stops: Sequence[int], steps: StepSpec | Sequence[StepSpec],
                 stopping_rule: StoppingRule | None = None, costs: Sequence[Any] | None = None,
                 rule: DeltaRule | None = None, name: str | None = None):
        if not callable(step):
            raise InvalidParameter("step must be a function (history, data, rng) -> output")
        if stopping_rule is not None and not callable(stopping_rule):
            raise InvalidParameter("stopping_rule must be a function history -> bool")
        self.step = step
        self.stops = parse_stops(stops)
        self.steps = expand_steps(steps, self.stops[-1])
        self.stopping_rule = stopping_rule
        self._guarantee, self.details = iterative_guarantee(self.stops, self.steps, costs, rule)
        if name is not None:
            self.name = name

    @property
    def guarantee(self) -> ODP:
        return self._guarantee

    def params(self) -> dict[str, Any]:
        return dict(self.details)

    def cost(self, length: int) -> Fraction:
        """ℰ of the class "stopped after ``length`` steps"."""
        return self._guarantee.cost(length)

    def finish(self, history: tuple) -> Any:
        """Post-processing of the released outputs into the release (default: the tuple)."""
        return history

    def release(self, data: Any, rng: RandomSource) -> Any:
        history: tuple = ()
        last = self.stops[-1]
        early = set(self.stops[:-1])
        for k in range(1, last + 1):
            history = history + (self.step(history, data, rng),)
            if k in early and self.stopping_rule is not None and self.stopping_rule(history):
                break
        return self.finish(history)


# --------------------------------------------------------------------------------------------
# Example: noisy gradient descent for logistic regression with early stopping
# --------------------------------------------------------------------------------------------


def logistic_gradients(weights: np.ndarray, features: np.ndarray, labels: np.ndarray,
                       clip: float) -> np.ndarray:
    """Per-record gradients of ``log(1 + exp(−y·wᵀx))`` (labels ±1), each clipped to L1 norm
    ``clip``."""
    margins = labels * (features @ weights)
    coef = -labels * _sigmoid(-margins)
    grads = coef[:, None] * features
    norms = np.abs(grads).sum(axis=1)
    scale = np.minimum(1.0, clip / np.maximum(norms, 1e-300))
    return grads * scale[:, None]


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


@dataclass
class GradientDescentRelease:
    """The release of :class:`NoisyGradientDescent`: the noisy gradients (``steps``, what the
    partition measures) and the final weights (their post-processing)."""

    steps: tuple
    weights: np.ndarray
    iterates: list

    def __len__(self) -> int:
        return len(self.steps)


class NoisyGradientDescent(IterativeMechanism):
    """Gradient descent for L2-regularised logistic regression with noisy gradients and early
    stopping (the example of Sec. 5; see the module docstring for the privacy argument).

    Data: ``(features, labels)`` with ``features`` an (n, d) array and ``labels`` in {−1, +1};
    ``n`` must equal the declared public size.  Each step releases the mean clipped gradient
    plus discrete Laplace noise (ε = ``epsilon_step``); the iterate is
    ``w ← w − η (g̃ + Λw)``.  At each stopping point the rule compares the norm of the mean of
    the last ``window`` regularised noisy gradients with ``stop_threshold``."""

    name = "noisy_gd"

    def __init__(self, *, n: int, dim: int, epsilon_step: Any, stops: Sequence[int],
                 learning_rate: float = 1.0, regularization: float = 1e-3, clip: Any = 1,
                 stop_threshold: float = 0.0, window: int = 5, granularity: Any = None,
                 rule: DeltaRule | None = None):
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise InvalidParameter("n (the public number of records) must be an integer >= 1")
        if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
            raise InvalidParameter("dim must be an integer >= 1")
        self.n, self.dim = n, dim
        self.epsilon_step = parse_epsilon(epsilon_step, name="epsilon_step")
        if self.epsilon_step <= 0:
            raise InvalidParameter("epsilon_step must be > 0")
        self.clip = to_fraction(clip, name="clip")
        if self.clip <= 0:
            raise InvalidParameter("clip must be > 0")
        if window < 1:
            raise InvalidParameter("window must be >= 1")
        self.learning_rate = float(learning_rate)
        self.regularization = float(regularization)
        self.stop_threshold = float(stop_threshold)
        self.window = window
        sensitivity = 2 * self.clip / n
        self.granularity = (sensitivity / 1000 if granularity is None
                            else to_fraction(granularity, name="granularity"))
        if self.granularity <= 0:
            raise InvalidParameter("granularity must be > 0")
        #: L1 sensitivity of the gridded mean gradient, in grid units (see the module docstring)
        self.units = math.ceil(sensitivity * (1 + Fraction(1, 10**9)) / self.granularity) + dim
        self.noise_scale = Fraction(self.units) / self.epsilon_step
        spec = StepSpec(self.epsilon_step, 0)
        super().__init__(self._noisy_gradient, stops=stops, steps=spec,
                         stopping_rule=self._small_gradient, rule=rule)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "n": self.n, "dim": self.dim, "clip": str(self.clip),
                "granularity": str(self.granularity), "learning_rate": self.learning_rate,
                "regularization": self.regularization, "stop_threshold": self.stop_threshold,
                "window": self.window}

    def iterates(self, history: Sequence[np.ndarray]) -> list[np.ndarray]:
        """``w_0 = 0, w_{k+1} = w_k − η (g̃_k + Λ w_k)`` (post-processing of the release)."""
        w = np.zeros(self.dim)
        out = [w]
        for g in history:
            w = w - self.learning_rate * (g + self.regularization * w)
            out.append(w)
        return out

    def _noisy_gradient(self, history: tuple, data: Any, rng: RandomSource) -> np.ndarray:
        features, labels = data
        features = np.asarray(features, dtype=float)
        labels = np.asarray(labels, dtype=float)
        if features.shape != (self.n, self.dim) or labels.shape != (self.n,):
            raise InvalidParameter(
                f"expected features of shape ({self.n}, {self.dim}) and {self.n} labels")
        w = self.iterates(history)[-1]
        grads = logistic_gradients(w, features, labels, float(self.clip))
        noisy = np.empty(self.dim)
        for j in range(self.dim):
            mean = Fraction(math.fsum(grads[:, j])) / self.n
            unit = math.floor(mean / self.granularity + Fraction(1, 2))
            noisy[j] = float((unit + discrete_laplace(self.noise_scale, rng)) * self.granularity)
        return noisy

    def _small_gradient(self, history: tuple) -> bool:
        ws = self.iterates(history)
        recent = [history[-i] + self.regularization * ws[-i - 1]
                  for i in range(1, min(self.window, len(history)) + 1)]
        return float(np.linalg.norm(np.mean(recent, axis=0))) < self.stop_threshold

    def finish(self, history: tuple) -> GradientDescentRelease:
        its = self.iterates(history)
        return GradientDescentRelease(history, its[-1], its)

    def noise_norm(self) -> float:
        """Typical L2 norm of one step's noise, ``√(2d)·g·m/ε`` (for choosing thresholds)."""
        return math.sqrt(2 * self.dim) * float(self.granularity * self.noise_scale)
