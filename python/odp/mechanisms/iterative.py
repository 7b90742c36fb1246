"""Iterative mechanisms with early stopping (Hartmann et al. 2022, Sec. 5: Alg. 3, Lemma 11).

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

**Step privacy of the noisy gradient.**  Neighbouring databases have the same public size
``n`` and differ in one record (replace-one, at the same position).  At a step the weights
``w`` are fixed by the released history, and the mechanism's own floating-point computation is
analysed, not the real-number one (``u = 2⁻⁵³``, all bounds exact rationals):

1. *Per-record gradients.*  Record i's gradient ``ĝ_i`` of the logistic loss is computed in
   float64 by element-wise operations and one reduction along its own row (no BLAS product,
   whose blocking could couple rows), so ``ĝ_i`` depends on ``w`` and record i only.  It is
   clipped to L1 norm ``C`` in floats, then *verified*: its float L1 norm ``T̂_i`` (a sum of d
   non-negative floats, any summation order) satisfies ``T_i ≤ T̂_i/(1 − γ)`` with
   ``γ = (d−1)u/(1 − (d−1)u)`` (Higham, *Accuracy and Stability of Numerical Algorithms*,
   §4.2; sums never underflow inexactly).  A record whose ``T̂_i`` exceeds the float
   ``τ = float_up(C·(1 + (4d+16)u))`` — which clipping never produces for a finite gradient,
   only a non-finite or pathologically underflowed one does — contributes the zero vector.
   Hence every contribution has ``‖ĝ_i‖₁ ≤ C* := τ/(1 − γ)`` (exact), and replacing one
   record moves the exact column sums ``S_j = Σ_i ĝ_ij`` by at most ``2C*`` in L1 norm.
2. *The sum.*  Each column is summed with :func:`math.fsum`, correctly rounded up to one ulp
   (the documented worst case, double rounding), so ``|F_j − S_j| ≤ 2⁻⁵¹|S_j| + 2⁻¹⁰⁷⁴``
   (the last term for subnormal results).  As ``Σ_j |S_j| ≤ Σ_i ‖ĝ_i‖₁ ≤ nC*``, the computed
   mean ``F/n`` is within ``2⁻⁵¹C* + d·2⁻¹⁰⁷⁴/n`` of ``S/n`` in L1 norm, for each database.
   So the computed means of neighbours differ by at most
   ``Δ = 2C*/n + 2⁻⁵⁰C* + d·2⁻¹⁰⁷³/n`` (:attr:`NoisyGradientDescent.sensitivity`).  This
   margin is absolute, not relative to ``2C/n``: the float error of a sum of n terms grows
   with n, the sensitivity shrinks with it (relative to ``2C/n`` it is ``≈ n·2⁻⁵¹``, which
   a fixed relative margin such as 10⁻⁹ does not cover for n beyond a few million).
3. *The grid.*  The exact rational mean ``F_j/n`` is put on ``g·ℤ`` with ``⌊v/g + 1/2⌋``,
   which moves each coordinate by less than one unit more, so the integer vectors of
   neighbours differ by at most ``m = ⌈Δ/g⌉ + d`` (:attr:`NoisyGradientDescent.units`) in L1
   norm.  Independent discrete Laplace noise of scale ``m/ε_k`` per coordinate is then
   ε_k-DP (the product of the per-coordinate ratios is at most ``exp(‖Δ‖₁ ε_k/m)``).

``n·C*`` must stay below ``2¹⁰⁰⁰`` (checked) so that no float sum overflows.  The
regulariser's gradient ``Λw`` does not depend on the data and is added after the noise
(post-processing).

**Finite output space.**  Each released coordinate is ``g·clamp(u_j + Z_j, −N, N)``: the clamp
comes after the noise and ``N`` is public, so it is post-processing (the step stays ε_k-DP and
the partition by output length is untouched).  As every contribution has ``‖ĝ_i‖₁ ≤ C*``, each
computed mean coordinate has ``|F_j/n| ≤ C*(1 + 2⁻⁵¹) + 2⁻¹⁰⁷⁴`` (step 2), so
``|u_j| ≤ U := ⌈(C*(1 + 2⁻⁵¹) + 2⁻¹⁰⁷⁴)/g⌉ + 1`` on **every** database.  The window is
``N = U + ⌈s·(128 + ℓ)⌉`` with ``s = m/ε_k`` the noise scale and ``ℓ`` the bit length of
``k_n·d``: a coordinate is changed by the clamp only if ``|Z_j| > s·(128 + ℓ)``, probability
``< 2e^{−128}·e^{−ℓ} < 2e^{−128}/(k_n d)``, so over all ``k_n·d`` released coordinates of a
run the clamp changes anything with probability below ``2e^{−128} < 2⁻¹⁸³``, whatever the
data (:meth:`NoisyGradientDescent.clamp_bound`).  The output space — at most ``k_n`` steps of
``d`` coordinates in ``g·{−N, …, N}`` — is finite.  A generic :class:`IterativeMechanism`'s
output space is the sequences of its steps' outputs (at most ``k_n`` of them): finite when
each step's is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Sequence

import numpy as np

from ..budget import parse_positive, parse_positive_int, to_fraction
from ..composition import (
    BasicComposition,
    BucketsComposition,
    DeltaRule,
    OptimalDelta,
    PrefixComposition,
    PrefixDeltaSum,
    RDPComposition,
    ReplaceOneComposition,
    StepSpec,
    expand_steps,
    iterative_guarantee,
    output_length,
    parse_stops,
)
from ..errors import InvalidParameter
from ..neighbours import Neighbours
from ..floats import float_up
from ..guarantees import ODP
from ..samplers import discrete_laplace
from .base import Mechanism
from .builtin import class_intact, register, seal, trust_class
from .public import check_labelled, unpack
from .window import TAIL_SCALES, Window, laplace_clamp_bound
from ..types import Data, Number, RandomSource, Release

__all__ = [
    "IterativeMechanism",
    "NoisyGradientDescent",
    "GradientDescentRelease",
    "logistic_gradients",
    "output_length",
    "trusted_rule",
    "trusted_composition",
]

#: The outputs s_1, …, s_{k−1} released so far: whatever each step outputs, hence ``Any``.
History = tuple[Any, ...]
Step = Callable[[History, Any, RandomSource], Any]
StoppingRule = Callable[[History], bool]


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
        The δ rule (:class:`odp.composition.PrefixDeltaSum`, :class:`~odp.composition.OptimalDelta`, …).
    """

    name = "iterative"

    def __init__(self, step: Step, *, stops: Sequence[int], steps: StepSpec | Sequence[StepSpec],
                 stopping_rule: StoppingRule | None = None, costs: Sequence[Number] | None = None,
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

    def finish(self, history: History) -> Release:
        """Post-processing of the released outputs into the release (default: the tuple)."""
        return history

    def release(self, data: Data, rng: RandomSource) -> Release:
        history: History = ()
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
    ``clip`` in float64.  Row-local: element-wise operations and reductions along each row
    only, so a record's gradient depends on ``weights`` and that record alone."""
    margins = labels * (features * weights).sum(axis=1)
    coef = -labels * _sigmoid(-margins)
    grads = coef[:, None] * features
    norms = np.abs(grads).sum(axis=1)
    scale = np.minimum(1.0, clip / np.maximum(norms, 1e-300))
    clipped: np.ndarray = grads * scale[:, None]
    return clipped


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * z))


#: unit roundoff of float64
_U = Fraction(1, 2**53)


def _finite_float(value: Any, *, name: str, positive: bool = False) -> float:
    """A finite float64 hyperparameter (post-processing only: no privacy depends on it), > 0
    if ``positive`` else ≥ 0; anything else is an :class:`InvalidParameter`."""
    try:
        x = to_fraction(value, name=name, warn=False)  # NaN, ±inf, None, bool, text: refused
    except InvalidParameter as exc:  # an InvalidBudget: this is not a budget
        raise InvalidParameter(str(exc)) from None
    if x < 0 or (positive and x == 0):
        raise InvalidParameter(f"{name} must be {'> 0' if positive else '>= 0'}, got {value!r}")
    try:
        out = float(x)
    except OverflowError:
        out = math.inf
    if not math.isfinite(out):
        raise InvalidParameter(f"{name} must be a finite float64, got {value!r}")
    return out


@dataclass
class GradientDescentRelease:
    """The release of :class:`NoisyGradientDescent`: the noisy gradients (``steps``, what the
    partition measures) and the final weights (their post-processing)."""

    steps: History
    weights: np.ndarray
    iterates: list[np.ndarray]

    def __len__(self) -> int:
        return len(self.steps)


class NoisyGradientDescent(IterativeMechanism):
    """Gradient descent for L2-regularised logistic regression with noisy gradients and early
    stopping (the example of Sec. 5; see the module docstring for the privacy argument).

    Data: ``(features, labels)`` with ``features`` an (n, d) array and ``labels`` in {−1, +1};
    ``n`` must equal the declared public size (shapes and labels are checked before the round
    is reserved).  Each step releases the mean clipped gradient plus discrete Laplace noise
    (ε = ``epsilon_step``); the iterate is ``w ← w − η (g̃ + Λw)``.  At each stopping point the
    rule compares the norm of the mean of the last ``window`` regularised noisy gradients with
    ``stop_threshold``.  ``learning_rate`` η > 0, ``regularization`` Λ ≥ 0 and
    ``stop_threshold`` ≥ 0 must be finite numbers (an :class:`InvalidParameter` otherwise).

    Each released coordinate is clamped to ``g·[−N, N]`` (:attr:`grid_window`, module
    docstring): the output space is finite, and on every database the clamp changes a run's
    release with probability below ``2⁻¹⁸³`` (:meth:`clamp_bound`).  (``window`` is the
    stopping rule's averaging window, not this one.)"""

    neighbours = Neighbours.REPLACE_ONE  #: what its guarantee is stated for (odp.neighbours)

    name = "noisy_gd"

    def __init__(self, *, n: int, dim: int, epsilon_step: Any, stops: Sequence[int],
                 learning_rate: Any = 1.0, regularization: Any = 1e-3, clip: Any = 1,
                 stop_threshold: Any = 0.0, window: int = 5, granularity: Any = None,
                 rule: DeltaRule | None = None):
        self.n = parse_positive_int(n, name="n (the public number of records)")
        self.dim = d = parse_positive_int(dim, name="dim")
        self.epsilon_step = parse_positive(epsilon_step, name="epsilon_step")
        self.clip = parse_positive(clip, name="clip")
        self.window = parse_positive_int(window, name="window")
        self.learning_rate = _finite_float(learning_rate, name="learning_rate", positive=True)
        self.regularization = _finite_float(regularization, name="regularization")
        self.stop_threshold = _finite_float(stop_threshold, name="stop_threshold")
        self.granularity = (2 * self.clip / self.n / 1000 if granularity is None
                            else parse_positive(granularity, name="granularity"))
        # the float analysis of the module docstring (steps 1-3), in exact rationals
        #: the float threshold τ of the per-record norm check (step 1)
        self._norm_limit = float_up(self.clip * (1 + (4 * d + 16) * _U))
        gamma = (d - 1) * _U / (1 - (d - 1) * _U)
        #: C*: bound on the L1 norm of every computed per-record contribution (step 1)
        self.clip_bound = Fraction(self._norm_limit) / (1 - gamma)
        if self.n * self.clip_bound >= 2**1000:
            raise InvalidParameter("n·clip must be below 2**1000 (float sums would overflow)")
        #: Δ: L1 sensitivity of the computed mean gradient, float error included (step 2)
        self.sensitivity = (2 * self.clip_bound / self.n + self.clip_bound / 2**50
                            + Fraction(d, self.n * 2**1073))
        #: L1 sensitivity of the gridded mean gradient, in grid units (step 3)
        self.units = math.ceil(self.sensitivity / self.granularity) + d
        self.noise_scale = Fraction(self.units) / self.epsilon_step
        spec = StepSpec(self.epsilon_step, Fraction(0))
        super().__init__(self._noisy_gradient, stops=stops, steps=spec,
                         stopping_rule=self._small_gradient, rule=rule)
        #: |u_j| ≤ covered_units on every database (module docstring)
        self.covered_units = math.ceil((self.clip_bound * (1 + Fraction(1, 2**51))
                                        + Fraction(1, 2**1074)) / self.granularity) + 1
        #: the clamp needs |Z_j| ≥ margin + 1 > s·(128 + ℓ), ℓ = bit length of k_n·d
        self.grid_margin = math.ceil(self.noise_scale * (TAIL_SCALES + self._bits()))
        n_max = self.covered_units + self.grid_margin
        #: the window (grid units) every released coordinate is clamped to
        self.grid_window = Window(-n_max, n_max)
        seal(self, NoisyGradientDescent, ok=trusted_rule(rule))

    def _bits(self) -> int:
        return (self.stops[-1] * self.dim).bit_length()

    def clamp_bound(self) -> Fraction:
        """A rigorous upper bound of P(the clamp changes a run's release), on every database:
        ``k_n·d·2·e^{−(K+1)/s}`` (:func:`odp.mechanisms.window.laplace_clamp_bound` per
        coordinate, union bound over the ``k_n·d`` coordinates), below ``2⁻¹⁸³``."""
        per_coordinate = laplace_clamp_bound(self.noise_scale, self.grid_margin)
        return self.stops[-1] * self.dim * per_coordinate

    def params(self) -> dict[str, Any]:
        return {**super().params(), "n": self.n, "dim": self.dim, "clip": str(self.clip),
                "granularity": str(self.granularity),
                "grid_window": self.grid_window.params(self.granularity),
                "learning_rate": self.learning_rate,
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

    def check_public(self, data: Any) -> None:
        """``data = (features, labels)`` of the declared public shapes ``(n, dim)`` and ``(n,)``,
        checked before the round is reserved (nothing is charged for a wrong shape)."""
        features, labels = unpack(data, ("features", "labels"), mechanism=self.name)
        check_labelled(features, labels, self.n, self.dim, what="training")

    def contributions(self, weights: np.ndarray, features: Any, labels: Any) -> np.ndarray:
        """The per-record gradients ``ĝ_i`` at ``weights``, clipped and verified (step 1 of the
        module docstring): every row has exact L1 norm at most :attr:`clip_bound`."""
        self.check_public((features, labels))  # second line (release called directly)
        x = np.asarray(features, dtype=float)
        y = np.asarray(labels, dtype=float)
        with np.errstate(all="ignore"):
            grads = logistic_gradients(np.asarray(weights, dtype=float), x, y,
                                       float(self.clip))
            norms = np.abs(grads).sum(axis=1)
        # NaN fails the comparison too: such a record contributes nothing
        grads[~(norms <= self._norm_limit)] = 0.0
        return grads

    def mean_gradient(self, weights: np.ndarray, features: Any, labels: Any) -> list[Fraction]:
        """The computed mean gradient ``F_j/n`` (exact rationals of the ``math.fsum`` column
        sums, step 2): neighbours' values differ by at most :attr:`sensitivity` in L1 norm."""
        grads = self.contributions(weights, features, labels)
        return [Fraction(math.fsum(grads[:, j])) / self.n for j in range(self.dim)]

    def grid_gradient(self, weights: np.ndarray, features: Any, labels: Any) -> list[int]:
        """The mean gradient on the grid, ``⌊F_j/(n g) + 1/2⌋`` (step 3): neighbours' vectors
        differ by at most :attr:`units` in L1 norm."""
        half = Fraction(1, 2)
        return [math.floor(v / self.granularity + half)
                for v in self.mean_gradient(weights, features, labels)]

    def _noisy_gradient(self, history: History, data: Any, rng: RandomSource) -> np.ndarray:
        features, labels = data
        units = self.grid_gradient(self.iterates(history)[-1], features, labels)
        clamp = self.grid_window.clamp  # after the noise: post-processing
        return np.array([float(clamp(u + discrete_laplace(self.noise_scale, rng))
                               * self.granularity) for u in units])

    def _small_gradient(self, history: History) -> bool:
        ws = self.iterates(history)
        recent = [history[-i] + self.regularization * ws[-i - 1]
                  for i in range(1, min(self.window, len(history)) + 1)]
        return float(np.linalg.norm(np.mean(recent, axis=0))) < self.stop_threshold

    def finish(self, history: History) -> GradientDescentRelease:
        its = self.iterates(history)
        return GradientDescentRelease(history, its[-1], its)

    def noise_norm(self) -> float:
        """Typical L2 norm of one step's noise, ``√(2d)·g·m/ε`` (for choosing thresholds)."""
        return math.sqrt(2 * self.dim) * float(self.granularity * self.noise_scale)


# odp's own mechanism (odp.mechanisms.builtin); a user's IterativeMechanism never is: its
# steps and StepSpecs are its own declaration
register(NoisyGradientDescent, "noisy_gd")


# ----------------------------------------------------------------- odp's own δ rules (identity)
_COMPOSITIONS = (BasicComposition, BucketsComposition, RDPComposition)
for _cls in (*_COMPOSITIONS, ReplaceOneComposition, PrefixComposition, PrefixDeltaSum,
             OptimalDelta, DeltaRule):
    trust_class(_cls)


def trusted_composition(comp: Any) -> bool:
    """``comp`` is exactly one of odp's composition theorems (a replace-one wrapper of one
    included), whose classes are untouched (:mod:`odp.mechanisms.builtin`): the δ^{k_i} of a
    built-in Lemma 11 round are then odp's own numbers."""
    if type(comp) is ReplaceOneComposition:
        return class_intact(ReplaceOneComposition) and trusted_composition(comp.inner)
    return type(comp) in _COMPOSITIONS and class_intact(type(comp))


def trusted_rule(rule: Any) -> bool:
    """``rule`` is ``None`` (the default, Lemma 11 with basic composition) or exactly one of
    odp's δ rules with one of its composition theorems."""
    if rule is None:
        return True
    if type(rule) is PrefixDeltaSum:
        return class_intact(PrefixDeltaSum) and trusted_composition(rule.composition)
    return type(rule) is OptimalDelta and class_intact(OptimalDelta)
