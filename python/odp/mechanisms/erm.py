"""Output perturbation for L2-regularised logistic regression, and test-and-release
(Hartmann et al. 2022, Sec. 6: Alg. 4, Alg. 5, Thm. 17, Cor. 18; Chaudhuri, Monteleoni, Sarwate
2011).

* :class:`OutputPerturbationERM` (Alg. 4): release ``p̃ = p_min(x_train) + q`` where q has
  density ∝ ``exp(−β‖q‖₂)`` with ``β = ε/Δ`` and ``Δ`` the L2 sensitivity of the minimiser
  (Thm. 16: ``Δ = 2/(n_train Λ)``).  ε-DP.
* :class:`TestedLogisticRegression` (Alg. 5): release the model only if its noisy mean absolute
  error on a held-out test set is at most ``t``; otherwise ⊥.  Thm. 17: (𝒫, ℰ, 0)-ODP with
  ``ℰ(ℝ^d) = max(ε1, (2/n_test)/a·ε2)`` and ``ℰ({⊥}) = min(ℰ(ℝ^d), ε2)``,
  ``a = max(2/n_test, 2(exp(2/(n_train Λ)) − 1))``, w.r.t. replacing one record of either set.

Neighbouring databases: one record of ``x_train`` or of ``x_test`` replaced; ``n_train`` and
``n_test`` are public.  Records are ``(x, y)`` with ``‖x‖₂ ≤ 1`` (rows are clipped to norm 1 by
the mechanism, a per-record transformation) and ``y ∈ {−1, +1}``.

**The noise is sampled exactly, in norm and direction** (:mod:`odp.exact_continuous`).  ``q = R·G/‖G‖`` with
``R ~ Gamma(d, β)`` (a sum of d exact Exp(β) variables) and ``G`` a vector of d exact standard
normals (Karney 2016, "Sampling exactly from the normal distribution", Algorithms N and B),
so ``q`` has exactly the density ∝ exp(−β‖q‖).  Every continuous variable is a lazily refined
uniform deviate (random bits drawn from the mechanism's ``rng`` on demand); the release is
``p̃ = round_h(p̂ + q)`` on the grid ``h·ℤ^d`` (nearest point), decided with exact interval
arithmetic, refining the deviates until each coordinate's grid point is certain.  So ``p̃`` has
*exactly* the distribution of the rounded continuous mechanism — a post-processing of Alg. 4 —
and no floating-point value touches the noise.

**The minimiser is computed, not exact.**  The objective is Λ-strongly convex, so
``‖p̂ − p_min‖ ≤ ‖∇F(p̂)‖/Λ``; the solver refines ``p̂`` until this certified distance is at
most τ (the gradient is summed with ``math.fsum`` and a bound on its float64 error is added,
:func:`certified_gradient_norm`; the last Newton steps use that gradient), and the sensitivity
used is ``Δ = 2/(n_train Λ) + 2τ``.  The float margin is absolute while ``2/(n_train Λ)``
shrinks with n, so τ is public and chosen from n, Λ and d alone (:func:`solver_tolerance`):
``τ = max(10⁻⁵·2/(n_train Λ), 8·margin(P)/Λ)``, where ``margin(P)`` is the float margin at
the largest possible ``‖p̂‖`` (``P = min(1/Λ, √(2 ln 2/Λ))``: ``Λ‖p_min‖ ≤ 1`` and
``(Λ/2)‖p_min‖² ≤ F(0) = ln 2``).  Parameters that would need ``τ > 2/(n_train Λ)/100``, i.e.
``n(1+Λ)√d(8 + d·P) ≳ 1.1·10¹³``, are refused with :class:`~odp.errors.InvalidParameter` when
the mechanism is built, before any round is reserved.

**The test on the grid.**  The error ``s(p̃, x_test) = mean |h_p̃(x) − y|`` (exact margins,
float64 tanh, ``math.fsum``; error ``η ≤ 10⁻¹²``) is rounded to the grid ``g·ℤ`` with
``g = a/1000`` and compared with the threshold on the same grid after adding discrete Laplace
noise of scale ``M/ε2`` grid units,
``M = ⌈(a + 2η)/g⌉``.  With the sensitivities of Lemma 21 on this grid —
``M_test = ⌈(2/n_test + 2η)/g⌉`` for a test record, and ``M_train = ⌈(2(e^{Δ'} − 1) + 2η)/g⌉``
for a training record, where ``Δ' = Δ + h√d`` bounds ``‖p̃ − p̃'‖`` for the same continuous
noise q — the exact costs declared are ``ℰ(ℝ^d) = max(ε1, (M_test/M)·ε2)`` and
``ℰ({⊥}) = min(ℰ(ℝ^d), (max(M_train, M_test)/M)·ε2)`` with ``a`` the rational upper bound of
``max(2/n_test, 2(e^{Δ'} − 1))``: Thm. 17 on the grid (its proof only uses those two
sensitivities and the ratio bound of the noise).

**Finite output space.**  Each coordinate of the released model is clamped to
``h·[−N, N]`` after the noise (a public window: post-processing, Alg. 4 stays ε-DP; and since
clamping is 1-Lipschitz per coordinate, ``‖clamp(p̃) − clamp(p̃')‖ ≤ ‖p̃ − p̃'‖ ≤ Δ + h√d``,
so Alg. 5's test of the clamped model keeps the sensitivities above).  The minimiser satisfies
``‖p_min‖ ≤ 1/Λ`` (at the minimum ``Λ·p = −∇L(p)`` and ``‖∇L‖ ≤ 1`` as ``‖x‖ ≤ 1``), so
``|p̃_j| ≤ 1/Λ + τ + ‖q‖ + h/2`` on every database; with
``N = ⌈(1/Λ + τ + R)/h⌉ + 1`` and ``R = 2(d + 128)/β``, the clamp changes the release only
if ``‖q‖ > R``.  ``‖q‖ ~ Gamma(d, β)``, so with ``x = βR = 2(d + 128)``:
``P(‖q‖ > R) = e^{−x} Σ_{i<d} x^i/i! ≤ e^{−x}·e^{x/2}·Σ_{i<d} 2^i < 2^d·e^{−x/2}
= (2/e)^d·e^{−128} < 2⁻¹⁸⁴`` (using ``x^i/i! = 2^i (x/2)^i/i! ≤ 2^i e^{x/2}``), whatever the
data (:meth:`OutputPerturbationERM.clamp_bound`).  The output space is the finite set
``(h·{−N, …, N})^d`` (plus ⊥ for Alg. 5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ..budget import parse_epsilon, parse_positive, parse_positive_int, to_fraction
from ..errors import InvalidParameter, OdpError
from ..neighbours import Neighbours
from ..guarantees import DP, ODP
from ..exact_continuous import sample_l2_laplace
from ..rational import ceil_fraction, exp_bracket, magnitude, sqrt_bracket
from ..readable import ExactValue
from ..samplers import discrete_laplace
from .base import BOTTOM, Mechanism
from .builtin import register, seal
from .noise import value_or_bottom
from .public import check_labelled, unpack
from .window import TAIL_SCALES, Window
from ..types import Data, RandomSource, Release

__all__ = [
    "OutputPerturbationERM",
    "TestedLogisticRegression",
    "ModelRelease",
    "fit_logistic_regression",
    "prepare_records",
    "mean_absolute_error",
    "certified_gradient_norm",
    "accurate_gradient",
    "gradient_margin",
    "solver_tolerance",
    "error_noise_scale",
    "error_noise_percentile",
]

#: relative accuracy of the certified minimiser: τ ≥ TOLERANCE · 2/(n Λ)
TOLERANCE = Fraction(1, 10**5)
#: largest τ accepted, relative to 2/(n Λ) (the sensitivity is 2/(n Λ) + 2τ)
MAX_TOLERANCE = Fraction(1, 100)
#: bound on the float64 error of the test error s: the margins pᵀx are exact rationals, each
#: term |tanh(z/2) − y| is within a few ulps (≤ 2⁻⁵⁰), and the mean uses math.fsum
ERROR_MARGIN = Fraction(1, 10**12)
_U = 2.0**-52


# --------------------------------------------------------------------------------------------
# Logistic regression: data preparation and a certified minimiser
# --------------------------------------------------------------------------------------------


def prepare_records(features: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    """Rows clipped to L2 norm ≤ 1 (a per-record transformation) and labels checked to be ±1."""
    x = np.asarray(features, dtype=float)
    y = np.asarray(labels, dtype=float)
    if x.ndim != 2 or y.shape != (x.shape[0],):
        raise InvalidParameter("features must be an (n, d) array and labels a length-n array")
    if not np.all(np.isfinite(x)):
        raise InvalidParameter("features must be finite")
    if not np.all((y == 1) | (y == -1)):
        raise InvalidParameter("labels must be -1 or +1")
    norms = np.linalg.norm(x, axis=1)
    scale = np.where(norms > 1, 1.0 / np.maximum(norms, 1e-300), 1.0)
    x = x * scale[:, None]
    # after scaling, a norm may exceed 1 by an ulp: shrink those rows once more
    over = np.linalg.norm(x, axis=1) > 1
    x[over] *= 1 - 4e-16
    return x, y


def _objective(p: np.ndarray, x: np.ndarray, y: np.ndarray, lam: float
               ) -> tuple[float, np.ndarray, np.ndarray]:
    z = y * (x @ p)
    loss = float(np.mean(np.logaddexp(0.0, -z))) + 0.5 * lam * float(p @ p)
    s = 0.5 * (1.0 - np.tanh(0.5 * z))  # σ(−z)
    grad = -(x.T @ (y * s)) / len(y) + lam * p
    return loss, grad, s


def gradient_margin(norm_p: float, lam: float, d: int) -> float:
    """The float64 error margin of :func:`accurate_gradient` at a point of norm ``norm_p``:
    ``√d·(8 + d‖p‖)·2⁻⁵²·(1 + Λ)`` (see :func:`certified_gradient_norm`)."""
    return math.sqrt(d) * (8 + d * norm_p) * _U * (1 + lam)


def accurate_gradient(p: np.ndarray, x: np.ndarray, y: np.ndarray, lam: float) -> np.ndarray:
    """``∇F(p)`` with each coordinate's mean summed by :func:`math.fsum` (its error is the
    terms' float error only, bounded by :func:`gradient_margin`)."""
    z = y * (x @ p)
    s = 0.5 * (1.0 - np.tanh(0.5 * z))
    terms = -(y * s)[:, None] * x
    n, d = x.shape
    grad: np.ndarray = np.array([math.fsum(terms[:, j]) / n for j in range(d)]) + lam * p
    return grad


def certified_gradient_norm(p: np.ndarray, x: np.ndarray, y: np.ndarray, lam: float) -> float:
    """An upper bound on ``‖∇F(p)‖`` for the exact gradient at the float vector ``p``: each
    coordinate's mean is summed with :func:`math.fsum`, and the float64 error of the terms
    (``σ(−z)`` within 2 ulps absolute, ``z = y·pᵀx`` within ``d·u·‖p‖`` times a derivative
    ≤ 1/4, and the products) is added as the margin ``√d·(8 + d‖p‖)·2⁻⁵²`` (rows have norm ≤ 1)."""
    return _certified_norm(accurate_gradient(p, x, y, lam), p, lam)


def _certified_norm(grad: np.ndarray, p: np.ndarray, lam: float) -> float:
    """The bound of :func:`certified_gradient_norm` from ``grad = accurate_gradient(p, …)``."""
    margin = gradient_margin(float(np.linalg.norm(p)), lam, p.shape[0])
    return float(float(np.linalg.norm(grad)) * (1 + 4 * _U) + margin)


def solver_tolerance(n: int, regularization: Fraction, dim: int) -> Fraction:
    """The public accuracy τ of the certified minimiser (module docstring):
    ``max(TOLERANCE·2/(nΛ), 8·margin(P)/Λ)`` with ``P = min(1/Λ, √(2 ln 2/Λ))`` bounding
    ``‖p_min‖``.  Raises :class:`InvalidParameter` if that exceeds ``MAX_TOLERANCE·2/(nΛ)``:
    the float64 certificate cannot reach a useful accuracy at this n, Λ and d."""
    base = 2 / (n * regularization)
    limit = MAX_TOLERANCE * base
    norm_bound = None
    try:
        lam = float(regularization)
        norm_bound = min(1 / lam, math.sqrt(2 * math.log(2) / lam)) + 1e-4
        need = Fraction(8 * gradient_margin(norm_bound, lam, dim) / lam)
    except (OverflowError, ZeroDivisionError, ValueError):  # ValueError: Fraction(inf)
        need = None
    if need is None or need > limit:
        shown_p = "out of range" if norm_bound is None else f"{norm_bound:.3g}"
        raise InvalidParameter(
            f"n={magnitude(n)}, regularization={magnitude(regularization)}, dim={dim}: the "
            "minimiser's float64 certificate cannot reach 1% of the sensitivity 2/(nΛ): odp needs "
            "n·(1+Λ)·√d·(8 + d·P) below about 1.1e13, with P = min(1/Λ, √(2 ln 2/Λ)) bounding "
            f"‖p_min‖ (here n·(1+Λ) = {magnitude(n * (1 + regularization))}, P = {shown_p}); use "
            "fewer records, fewer features or a different regularization; nothing was reserved "
            "or charged")
    return max(TOLERANCE * base, need)


def fit_logistic_regression(x: np.ndarray, y: np.ndarray, regularization: float, *,
                            tolerance: float, max_newton: int = 100) -> tuple[np.ndarray, float]:
    """Minimise ``(1/n) Σ log(1 + e^{−y pᵀx}) + (Λ/2)‖p‖²`` by damped Newton steps; returns
    ``(p̂, bound)`` with ``‖p̂ − p_min‖ ≤ bound ≤ tolerance``, certified by strong convexity:
    ``bound = ‖∇F(p̂)‖/Λ`` with the gradient norm bounded by :func:`certified_gradient_norm`.
    Near the minimum (gradient norm below ``max(τΛ, min(10⁻⁹, Λ²))``, where full Newton steps
    converge quadratically) the steps use :func:`accurate_gradient`, so the accuracy is limited
    by the certificate's margin, not by the float error of a BLAS sum.  Raises
    :class:`OdpError` if the tolerance is not reached (it is reachable when ``tolerance`` comes
    from :func:`solver_tolerance`)."""
    lam = float(regularization)
    n, d = x.shape
    near = max(tolerance * lam, min(1e-9, lam * lam))
    p = np.zeros(d)
    for _ in range(max_newton):
        loss, grad, s = _objective(p, x, y, lam)
        weights = s * (1.0 - s)
        hess = (x.T * weights) @ x / n + lam * np.eye(d)
        if float(np.linalg.norm(grad)) <= near:
            grad = accurate_gradient(p, x, y, lam)
            bound = _certified_norm(grad, p, lam) / lam
            if bound <= tolerance:
                return p, bound
            p = p - np.linalg.solve(hess, grad)  # a full Newton step from near the minimum
            continue
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while t > 1e-12:
            candidate = p - t * step
            if _objective(candidate, x, y, lam)[0] <= loss - 1e-4 * t * float(grad @ step):
                break
            t *= 0.5
        p = p - t * step
    raise OdpError("the logistic-regression solver did not reach its certified tolerance; "
                   "this should not happen for a strongly convex objective — please report it")


def mean_absolute_error(p: Any, x: np.ndarray, y: np.ndarray) -> float:
    """``s(p, x) = mean |h_p(x) − y|`` with ``h_p(x) = 2σ(pᵀx) − 1 = tanh(pᵀx/2)`` (Sec. 6.1).

    Evaluated carefully (error below ``ERROR_MARGIN``): each margin ``pᵀx`` is computed as an
    exact rational (``p`` may be a sequence of Fractions, floats count by their exact value),
    then ``tanh`` in float64 and the mean with :func:`math.fsum`."""
    coords = [Fraction(v) for v in p]
    terms = []
    for row, label in zip(np.asarray(x, dtype=float), np.asarray(y, dtype=float)):
        z = sum((Fraction(float(a)) * c for a, c in zip(row, coords) if a), Fraction(0))
        terms.append(abs(math.tanh(float(z) / 2) - float(label)))
    return math.fsum(terms) / len(terms)


# --------------------------------------------------------------------------------------------
# Alg. 4 and Alg. 5
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelRelease:
    """A released parameter vector: exact grid values (:class:`odp.readable.ExactValue`,
    printed as decimals) and their floats."""

    exact: tuple[ExactValue, ...]

    @property
    def weights(self) -> np.ndarray:
        return np.array([float(v) for v in self.exact])

    def to_json(self) -> dict[str, Any]:
        return {"weights": [float(v) for v in self.exact]}




class OutputPerturbationERM(Mechanism):
    """Alg. 4 for L2-regularised logistic regression: ε-DP release of the noisy minimiser on
    the grid ``granularity·ℤ^d`` (see the module docstring).  Data: ``(features, labels)``
    with ``n`` rows (public).

    Every coordinate is clamped to ``h·[−N, N]`` (:attr:`window`), ``N = ⌈(1/Λ + τ + R)/h⌉ + 1``
    with ``R = 2(d + 128)/β``: the output space ``(h·{−N, …, N})^d`` is finite, and on every
    database the clamp changes the release with probability below ``2⁻¹⁸⁴`` (module
    docstring, :meth:`clamp_bound`)."""

    neighbours = Neighbours.REPLACE_ONE  #: what its guarantee is stated for (odp.neighbours)

    name = "erm_output_perturbation"

    def __init__(self, *, epsilon: Any, regularization: Any, n: int, dim: int,
                 granularity: Any = None):
        self.epsilon = parse_positive(epsilon, name="epsilon")
        self.regularization = parse_positive(regularization, name="regularization")
        self.n = parse_positive_int(n, name="n")
        self.dim = parse_positive_int(dim, name="dim")
        base = 2 / (self.n * self.regularization)
        #: the certified accuracy τ of the computed minimiser (refused here if unreachable)
        self.tolerance = solver_tolerance(self.n, self.regularization, self.dim)
        #: L2 sensitivity of the computed minimiser (Thm. 16 plus the solver's certificate)
        self.sensitivity = base + 2 * self.tolerance
        self.granularity = (base / 10**4 if granularity is None
                            else parse_positive(granularity, name="granularity"))
        self.beta = self.epsilon / self.sensitivity
        #: ‖q‖ ≤ noise_radius except with probability < 2⁻¹⁸⁴ (module docstring)
        self.noise_radius = 2 * (self.dim + TAIL_SCALES) / self.beta
        n_max = math.ceil((1 / self.regularization + self.tolerance + self.noise_radius)
                          / self.granularity) + 1
        #: the window (grid units) every released coordinate is clamped to
        self.window = Window(-n_max, n_max)
        self._guarantee = DP(self.epsilon)
        seal(self, OutputPerturbationERM)

    def clamp_bound(self) -> Fraction:
        """A rigorous upper bound of P(the clamp changes the release), on every database:
        ``2^d·e^{−(d + 128)}`` (module docstring), as an exact rational bound."""
        return Fraction(2**self.dim) * exp_bracket(Fraction(-(self.dim + TAIL_SCALES)))[1]

    @property
    def guarantee(self) -> DP:
        return self._guarantee

    def params(self) -> dict[str, Any]:
        return {"epsilon": str(self.epsilon), "regularization": str(self.regularization),
                "n": self.n, "dim": self.dim, "sensitivity": str(self.sensitivity),
                "granularity": str(self.granularity),
                "window": self.window.params(self.granularity)}

    def check_public(self, data: Any) -> None:
        """``data = (features, labels)`` of the declared public shapes ``(n, dim)`` and
        ``(n,)``, checked before the round is reserved (nothing is charged)."""
        features, labels = unpack(data, ("features", "labels"), mechanism=self.name)
        check_labelled(features, labels, self.n, self.dim, what="training")

    def minimiser(self, features: Any, labels: Any) -> np.ndarray:
        x, y = prepare_records(features, labels)
        if x.shape != (self.n, self.dim):
            raise InvalidParameter(f"expected {self.n} training records with {self.dim} "
                                   f"features, got shape {x.shape}")
        p, _ = fit_logistic_regression(x, y, float(self.regularization),
                                       tolerance=float(self.tolerance) * (1 - 1e-6))
        return p

    def release(self, data: Any, rng: RandomSource) -> ModelRelease:
        features, labels = data
        p = self.minimiser(features, labels)
        noisy = sample_l2_laplace([Fraction(float(v)) for v in p], self.beta, self.granularity,
                                  rng)
        h, clamp = self.granularity, self.window.clamp  # after the noise: post-processing
        return ModelRelease(tuple(ExactValue(h * clamp(int(v / h))) for v in noisy))


def error_noise_scale(epsilon2: Any, n: int, *, regularization: Any = 1,
                     train_fraction: Any = "0.7") -> float:
    """Scale ``a/ε2`` of the test noise of Alg. 5 for a database of ``n`` records split
    ``train_fraction`` / rest (Fig. 2; continuous formula of the paper)."""
    frac = float(Fraction(train_fraction))
    n_train, n_test = n * frac, n * (1 - frac)
    lam = float(to_fraction(regularization, name="regularization"))
    a = max(2 / n_test, 2 * math.expm1(2 / (n_train * lam)))
    return a / float(parse_epsilon(epsilon2))


def error_noise_percentile(epsilon2: Any, n: int, *, regularization: Any = 1,
                          train_fraction: Any = "0.7", quantile: float = 0.95) -> float:
    """The ``quantile`` of the Laplace(a/ε2) test noise, ``(a/ε2)·ln(1/(2(1 − quantile)))``:
    if the model's error exceeds ``t`` by more than this, Alg. 5 returns ⊥ with probability at
    least ``quantile`` (Fig. 2)."""
    if not 0.5 <= quantile < 1:
        raise InvalidParameter("quantile must be in [0.5, 1)")
    return error_noise_scale(epsilon2, n, regularization=regularization,
                            train_fraction=train_fraction) * math.log(1 / (2 * (1 - quantile)))


class TestedLogisticRegression(Mechanism):
    """Alg. 5 (LogRegWithTest): Alg. 4 with ε1 on the training set, then release the model only
    if ``s(p̃, x_test) + r ≤ t`` (r ~ Laplace(a/ε2) on a grid); otherwise ⊥.  Declared
    guarantee: Thm. 17 on the grid (module docstring); with ε1 ≥ ε2 this is Cor. 18's
    (ε1 on ℝ^d, ε2 on ⊥).  Data: ``(x_train, y_train, x_test, y_test)``.  Output space: ⊥
    and the finite model space of :class:`OutputPerturbationERM` (clamped coordinates); the
    test runs on the clamped model."""

    neighbours = Neighbours.REPLACE_ONE  #: what its guarantee is stated for (odp.neighbours)

    __test__ = False
    name = "logreg_with_test"

    def __init__(self, *, epsilon1: Any, epsilon2: Any, threshold: Any, regularization: Any,
                 n_train: int, n_test: int, dim: int, granularity: Any = None):
        self.erm = OutputPerturbationERM(epsilon=epsilon1, regularization=regularization,
                                         n=n_train, dim=dim, granularity=granularity)
        self.epsilon1 = self.erm.epsilon
        self.epsilon2 = parse_positive(epsilon2, name="epsilon2")
        self.n_test = parse_positive_int(n_test, name="n_test")
        self.threshold = to_fraction(threshold, name="threshold")
        # ‖p̃ − p̃'‖ ≤ Δ + h√d for a training-record change (same continuous noise)
        shift = self.erm.sensitivity + self.erm.granularity * sqrt_bracket(Fraction(dim))[1]
        train_sens = 2 * (exp_bracket(shift)[1] - 1)
        test_sens = Fraction(2, self.n_test)
        self.a = ceil_fraction(max(test_sens, train_sens))
        self.test_granularity = self.a / 1000
        eta2 = 2 * ERROR_MARGIN
        self.units = math.ceil((self.a + eta2) / self.test_granularity)
        self.units_test = math.ceil((test_sens + eta2) / self.test_granularity)
        self.units_train = math.ceil((train_sens + eta2) / self.test_granularity)
        self.test_scale = Fraction(self.units) / self.epsilon2
        value_cost = max(self.epsilon1, Fraction(self.units_test, self.units) * self.epsilon2)
        bottom_cost = min(value_cost, Fraction(max(self.units_train, self.units_test),
                                               self.units) * self.epsilon2)
        self._guarantee = ODP(value_or_bottom, {"value": value_cost, "bottom": bottom_cost}, 0)
        seal(self, TestedLogisticRegression)

    @property
    def guarantee(self) -> ODP:
        return self._guarantee

    def params(self) -> dict[str, Any]:
        return {**self.erm.params(), "epsilon2": str(self.epsilon2), "n_test": self.n_test,
                "threshold": str(self.threshold), "a": str(self.a),
                "test_granularity": str(self.test_granularity), "units": self.units,
                "units_test": self.units_test, "units_train": self.units_train}

    def check_public(self, data: Any) -> None:
        """``data = (x_train, y_train, x_test, y_test)`` with the declared public sizes
        ``n_train``, ``n_test`` and ``dim``, checked before the round is reserved."""
        x_train, y_train, x_test, y_test = unpack(
            data, ("x_train", "y_train", "x_test", "y_test"), mechanism=self.name)
        check_labelled(x_train, y_train, self.erm.n, self.erm.dim, what="training")
        check_labelled(x_test, y_test, self.n_test, self.erm.dim, what="test")

    def test_value(self, weights: Any, features: Any, labels: Any) -> int:
        """``⌊s(p̃, x_test)/g + 1/2⌋``: the model's test error in grid units."""
        x, y = prepare_records(features, labels)
        if x.shape != (self.n_test, self.erm.dim):
            raise InvalidParameter(f"expected {self.n_test} test records with "
                                   f"{self.erm.dim} features, got shape {x.shape}")
        s = Fraction(mean_absolute_error(weights, x, y))  # within ERROR_MARGIN of the truth
        return math.floor(s / self.test_granularity + Fraction(1, 2))

    def threshold_units(self) -> int:
        return math.floor(self.threshold / self.test_granularity + Fraction(1, 2))

    def release(self, data: Data, rng: RandomSource) -> Release:
        x_train, y_train, x_test, y_test = data
        model = self.erm.release((x_train, y_train), rng)
        noisy = (self.test_value(model.exact, x_test, y_test)
                 + discrete_laplace(self.test_scale, rng))
        if noisy <= self.threshold_units():
            return model
        return BOTTOM


# odp's own mechanisms (odp.mechanisms.builtin)
register(OutputPerturbationERM, "erm_output_perturbation")
register(TestedLogisticRegression, "logreg_with_test", parts={"erm": OutputPerturbationERM})
