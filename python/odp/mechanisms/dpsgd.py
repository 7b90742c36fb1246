"""DP-SGD with early stopping charged by ODP (Hartmann et al. 2022, Sec. 5: Alg. 3, Lemma 11).

:class:`DPSGD` trains a model (:class:`LogisticRegressionModel` or a one-hidden-layer
:class:`MLPModel`, numpy only) by differentially private stochastic gradient descent (Abadi et al.
2016) in which every random choice is exact and drawn from the accountant's CSPRNG, and stops at
the end of an epoch when the norm of the epoch's mean noisy gradient — computed from the released
outputs only — falls below a public threshold.  Its ODP partition is the number of steps run
(:func:`odp.composition.output_length`): a run that stops after ``k_i`` steps is charged
``ε^{k_i}``, the ε of its first ``k_i`` steps, not the worst case ``ε^{k_n}``.

**Neighbours** (:mod:`odp.neighbours`).  Add/remove one record (Poisson sampling's usual
relation, :attr:`odp.Neighbours.ADD_REMOVE`): the number of records ``n`` is then *private*.  The code never uses it: the noisy sum is normalised by the expected batch
size ``q·n₀`` with a declared public ``n₀`` (as DP-SGD implementations do), never by the realised
batch size nor by ``len(data)``; :meth:`DPSGD.check_public` checks only the number of features
and the label domain.  With ``neighbours=odp.Neighbours.REPLACE_ONE`` (or ``"replace-one"``; the
relation of the other built-in mechanisms, under which ``n = n₀`` is public and checked) the
add/remove guarantee of the composed steps is converted by group privacy, once (:class:`odp.composition.
ReplaceOneComposition`).  The mechanism declares the relation it is built with
(:attr:`DPSGD.neighbours`): an accountant of another relation refuses it before anything is
reserved.

**One step** (``s_k`` for ``k = 1 … k_n``), at the model ``w_k`` fixed by the released history:

1. *Poisson sampling* (:func:`poisson_sample`): record ``i`` is kept iff ``U_i < a`` for an exact
   uniform ``U_i ∈ {0, …, b−1}`` (``q = a/b`` in lowest terms), the ``U_i`` being the base-``b``
   digits of uniform integers below ``b^m < 2⁶²`` drawn with ``rng.randbelow`` — an exact
   Bernoulli(q) per record, independent across records and steps.
2. *Per-record gradients, row-local and order-fixed.*  Record i's gradient ``ĝ_i`` of the logistic
   loss is computed in float64 by element-wise numpy operations on the batch columns in a fixed
   order (sums over features are explicit loops of ``a + x_j·w_j``, never a BLAS product or a
   numpy reduction, whose blocking or SIMD order could depend on the array), and ``exp``/``tanh``
   by :mod:`math` one element at a time.  IEEE + − × ÷ √ are correctly rounded, so every
   element's value depends on its own operands only: ``ĝ_i`` is a fixed function of ``(w_k,
   record i)``, whatever the other records, the batch, its size or the record's position.
3. *Clip on the grid, verified exactly.*  In grid units ``u_i = ĝ_i/g``, clipped in floats to the
   L2 radius ``R = C/g`` (rounded down to a float), truncated coordinate-wise **toward zero** to
   the integer vector ``v_i = trunc(u_i)``; a row that is not finite or has a coordinate above
   ``⌊√K⌋`` is zeroed, then ``‖v_i‖₂² = Σ_j v_ij²`` is computed **in integers** and a row with
   ``‖v_i‖² > K`` is zeroed, where ``K = ⌈(C/g)²⌉``.  So every contribution satisfies
   ``‖v_i‖₂² ≤ K`` exactly — whatever the floating-point error, no analysis of it is needed.
   Truncation toward zero never increases ``|u_ij|``, so the grid costs no sensitivity (the
   sensitivity in grid units is ``C/g``, not ``C/g + √p/2`` as with rounding to nearest), and a
   float-clipped row (``‖u_i‖ ≤ R(1 + 4·2⁻⁵³)``) is never dropped: an integer ``‖v_i‖²`` above
   ``K ≥ (C/g)²`` would need ``(C/g)²·2⁻⁵⁰ ≥ 1``, excluded by ``C/g ≤ 2²⁰``.  Only non-finite
   or pathological rows are dropped.  (The price: each coordinate moves toward 0 by less than
   one grid unit; the default grid ``g = C/2¹⁶`` makes that negligible.)
4. *Sum and noise.*  ``S = Σ_{i∈batch} v_i`` in int64 (exact: ``|S_j| ≤ 2⁴⁰·2²⁰``), plus
   independent discrete Gaussian noise ``N_ℤ(0, σ_u²)``, ``σ_u² = σ²·K`` exactly
   (:func:`odp.samplers.discrete_gaussian`, CKS 2020 Alg. 3), per coordinate, then clamped to the
   public window ``[−N, N]`` (post-processing, below).  ``s_k`` is that integer vector.  The model
   update ``w_{k+1} = w_k − η(g·s_k/(q n₀) + λ w_k)`` is post-processing.

**Privacy of the steps** (:mod:`odp.subsampled_rdp`): adding a record ``z`` changes the exact
integer sum by ``b·v_z`` (``b`` its Bernoulli(q) inclusion) and nothing else (step 2), with
``‖v_z‖² ≤ K`` (step 3).  The Poisson-subsampled discrete Gaussian is then
``(α, ln(A_α)/(α−1))``-RDP at every integer order α ≥ 2, both directions, with ``A_α`` the
integer-order sum of Mironov–Talwar–Zhang 2019 at noise multiplier σ — the *same* value as the
continuous sampled Gaussian's at integer orders: for an integer shift, the discrete Gaussian's
moments ``E[L^k]`` equal the continuous ones exactly, and a symmetric-pair lemma shows the
other direction is dominated (proofs in :mod:`odp.subsampled_rdp`; tested against mpmath
summation).  The privacy loss accounted is that of the noise actually drawn (the discrete
Gaussian on the grid, after rounding); the continuous Gaussian's formula is used only because it
is *equal* at integer orders, not as an approximation.  Steps compose adaptively by adding RDP
(Mironov 2017, Prop. 1).  The cited general bound of Zhu & Wang 2019
(:func:`odp.subsampled_rdp.zhu_wang_rdp`) is larger (factor 3 on the terms ℓ ≥ 3) and not used
by default.

**Early stopping by ODP** (Alg. 3, Lemma 11 with RDP as COMP).  Stops at the ends of epochs
(``k_i = i·E·steps_per_epoch`` with ``E = check_every``, ``steps_per_epoch = ⌈1/q⌉``): at each
``k_i < k_n`` the rule compares ``‖g·Σ_{last epoch} s_k / (steps_per_epoch·q·n₀)‖₂`` with
``stop_threshold`` — released outputs only.  The costs are ``ε^{k_i}`` = the RDP-optimal ε of
the first ``k_i`` steps at ``δ_i = δ/n_stops`` (:meth:`odp.composition.RDPComposition.
epsilon_upper`), and the ODP δ is ``Σ_i COMP(M_1..M_{k_i}; ε^{k_i}) ≤ δ`` (Lemma 11, computed by
:class:`odp.composition.PrefixDeltaSum` with :class:`~odp.composition.RDPComposition`; the COMP is
pluggable, but privacy buckets has no pair for this discrete step:
:class:`~odp.composition.BucketsComposition` refuses it and says so).  The RDP → DP conversion
(CKS 2020, Prop. 12) is tighter than Mironov's and sound, not tight.  Thm. 15 (OptDel) is **not**
used: it covers generic (ε_k, δ_k)-DP steps, whose per-step description of a Gaussian step is far
looser than its RDP curve.

**Finite output space.**  Each released coordinate is ``clamp(S_j + Z_j, −N, N)``: the clamp comes
after the noise and ``N`` is public, so it is post-processing (the guarantee and the partition by
output length are untouched).  For every database of at most ``2⁴⁰`` records (more than fits in
memory for any model here), ``|S_j| ≤ 2⁴⁰·⌊√K⌋``; the default window is
``N = 2⁴⁰·⌊√K⌋ + ⌈128·σ̄⌉`` with ``σ̄ ≥ σ_u`` an integer, so the clamp changes a coordinate only
if ``|Z_j| > 128σ_u``, probability ``< 2e^{−8192}(1 + σ_u/128)`` (:func:`odp.mechanisms.window.
gaussian_clamp_bound`); over the ``k_n·p`` coordinates of a run, below ``2⁻¹⁰⁰``
(:meth:`DPSGD.clamp_bound`).  The output space — at most ``k_n`` integer vectors in
``[−N, N]^p`` — is finite.  A smaller public ``window`` may be given (tests use one); then
:meth:`DPSGD.clamp_bound` reports the bound for it.

**Cost limits.**  ``k_n`` is at most :data:`MAX_STEPS` and the parameter count at most
:data:`MAX_PARAMS`; the estimated time and memory of a run (:meth:`DPSGD.estimate`, from the
public parameters) are checked against :class:`odp.limits.Limits` when the mechanism is built,
before anything is computed; a run shows a progress bar on a terminal (:mod:`odp.progress`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from ..budget import parse_positive, parse_positive_int
from ..composition import (
    PrefixDeltaSum,
    PrefixComposition,
    RDPComposition,
    ReplaceOneComposition,
    StepSpec,
    output_length,
)
from ..errors import InvalidParameter
from ..neighbours import Neighbours
from ..floats import float_down
from ..guarantees import ODP, Data, Release
from ..limits import Estimate, Limits
from ..rational import exp_bracket
from ..rdp import check_delta, check_rate, check_sigma
from ..samplers import RandomSource, discrete_gaussian
from .builtin import register, seal
from .iterative import IterativeMechanism, _finite_float, trusted_composition
from .public import array_shape, check_sign_labels, unpack
from .window import TAIL_SCALES, Window, gaussian_clamp_bound, sigma_upper

__all__ = [
    "DPSGD",
    "DPSGDRelease",
    "LogisticRegressionModel",
    "MLPModel",
    "poisson_sample",
    "COVERED_RECORDS",
    "MAX_STEPS",
    "MAX_PARAMS",
]

#: The default window covers every database of at most this many records.
COVERED_RECORDS = 2**40

#: Largest number of steps ``k_n`` (epochs × steps per epoch) accepted.
MAX_STEPS = 10**7

#: Largest number of model parameters accepted.
MAX_PARAMS = 10**6

#: Largest ``√K`` (grid units per clip norm) accepted: keeps every integer sum exact in int64.
MAX_GRID_UNITS = 2**20

#: Default grid: ``g = C / 2**DEFAULT_GRID_BITS``.
DEFAULT_GRID_BITS = 16

#: Largest noise multiplier accepted (a larger one is a unit mistake).
MAX_NOISE_MULTIPLIER = 2**20

# Cost model of one step (seconds, measured on the project's 2-core machine, rounded up):
# one exact discrete Gaussian sample, one Poisson draw per record, one gradient entry.
_SECONDS_PER_NOISE = 4e-4
_SECONDS_PER_RECORD = 2e-7
_SECONDS_PER_ENTRY = 4e-8
_SECONDS_PER_TRANSCENDENTAL = 3e-7


# --------------------------------------------------------------------------- row-local math


def _row_dot(x: np.ndarray, w: Any, start: float = 0.0) -> np.ndarray:
    """``start + Σ_j x[:, j]·w[j]`` accumulated column by column (element-wise, fixed order)."""
    acc = np.full(x.shape[0], float(start))
    for j in range(x.shape[1]):
        acc = acc + x[:, j] * float(w[j])
    return acc


def _elementwise(fn: Any, a: np.ndarray) -> np.ndarray:
    """``fn`` (a :mod:`math` function) applied to each element on its own."""
    flat = [fn(v) for v in a.reshape(-1).tolist()]
    return np.array(flat, dtype=float).reshape(a.shape)


def _sigmoid_neg(z: np.ndarray) -> np.ndarray:
    """``σ(−z) = 1/(1 + e^z)`` element by element (``z`` clipped to ±700; NaN stays NaN)."""
    return 1.0 / (1.0 + _elementwise(math.exp, np.clip(z, -700.0, 700.0)))


def _row_sum_squares(u: np.ndarray) -> np.ndarray:
    acc = np.zeros(u.shape[0])
    for j in range(u.shape[1]):
        acc = acc + u[:, j] * u[:, j]
    return acc


# --------------------------------------------------------------------------- models


class LogisticRegressionModel:
    """Logistic regression ``P(y = 1 | x) = σ(wᵀx + b)``, loss ``ln(1 + e^{−y(wᵀx + b)})``
    (labels ±1).  Parameters ``(w_1 … w_dim, b)`` (``b`` only with ``fit_intercept``),
    initialised at 0."""

    name = "logistic"

    def __init__(self, dim: int, *, fit_intercept: bool = True):
        self.dim = parse_positive_int(dim, name="dim (the number of features)")
        self.fit_intercept = bool(fit_intercept)
        self.num_params = self.dim + int(self.fit_intercept)
        seal(self, LogisticRegressionModel)

    def initial_params(self) -> np.ndarray:
        return np.zeros(self.num_params)

    def _margin(self, params: np.ndarray, x: np.ndarray) -> np.ndarray:
        bias = float(params[self.dim]) if self.fit_intercept else 0.0
        return _row_dot(x, params[: self.dim], bias)

    def gradients(self, params: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Per-record gradients, shape ``(rows, num_params)``, row-local (module docstring)."""
        coef = -y * _sigmoid_neg(y * self._margin(params, x))
        out = np.empty((x.shape[0], self.num_params))
        for j in range(self.dim):
            out[:, j] = coef * x[:, j]
        if self.fit_intercept:
            out[:, self.dim] = coef
        return out

    def decision(self, params: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The logit ``wᵀx + b`` of each row (post-processing: any evaluation order)."""
        return self._margin(params, np.asarray(x, dtype=float))

    def describe(self) -> dict[str, Any]:
        return {"model": self.name, "dim": self.dim, "fit_intercept": self.fit_intercept}


class MLPModel:
    """A one-hidden-layer perceptron ``f(x) = w₂ᵀ tanh(W₁x + b₁) + b₂`` with the logistic loss
    (labels ±1).  ``W₁`` is initialised from a **public** seed (``N(0, 1/dim)`` entries), ``w₂``
    to ``N(0, 1/hidden)``, biases to 0 — data-independent.  Parameter vector: ``W₁`` row-major,
    ``b₁``, ``w₂``, ``b₂``."""

    name = "mlp"

    def __init__(self, dim: int, hidden: int = 8, *, seed: int = 0):
        self.dim = parse_positive_int(dim, name="dim (the number of features)")
        self.hidden = parse_positive_int(hidden, name="hidden (units)")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise InvalidParameter(f"seed must be an integer >= 0 (public), got {seed!r}")
        self.seed = seed
        self.num_params = self.hidden * self.dim + 2 * self.hidden + 1
        seal(self, MLPModel)

    def initial_params(self) -> np.ndarray:
        gen = np.random.default_rng(self.seed)  # public, data-independent initialisation
        w1 = gen.normal(0.0, 1.0 / math.sqrt(self.dim), size=self.hidden * self.dim)
        w2 = gen.normal(0.0, 1.0 / math.sqrt(self.hidden), size=self.hidden)
        return np.concatenate([w1, np.zeros(self.hidden), w2, [0.0]])

    def _split(self, params: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
        h, d = self.hidden, self.dim
        w1 = params[: h * d].reshape(h, d)
        b1 = params[h * d: h * d + h]
        w2 = params[h * d + h: h * d + 2 * h]
        return w1, b1, w2, float(params[-1])

    def _forward(self, params: np.ndarray, x: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
        w1, b1, w2, b2 = self._split(params)
        hidden = [_elementwise(math.tanh, _row_dot(x, w1[k], float(b1[k])))
                  for k in range(self.hidden)]
        out = np.full(x.shape[0], b2)
        for k in range(self.hidden):
            out = out + hidden[k] * float(w2[k])
        return hidden, out

    def gradients(self, params: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Per-record gradients (backpropagation), row-local (module docstring)."""
        _, _, w2, _ = self._split(params)
        hidden, out = self._forward(params, x)
        coef = -y * _sigmoid_neg(y * out)
        h, d = self.hidden, self.dim
        grads = np.empty((x.shape[0], self.num_params))
        for k in range(h):
            delta = (coef * float(w2[k])) * (1.0 - hidden[k] * hidden[k])
            for j in range(d):
                grads[:, k * d + j] = delta * x[:, j]
            grads[:, h * d + k] = delta
            grads[:, h * d + h + k] = coef * hidden[k]
        grads[:, -1] = coef
        return grads

    def decision(self, params: np.ndarray, x: np.ndarray) -> np.ndarray:
        return self._forward(params, np.asarray(x, dtype=float))[1]

    def describe(self) -> dict[str, Any]:
        return {"model": self.name, "dim": self.dim, "hidden": self.hidden, "seed": self.seed}


# --------------------------------------------------------------------------- Poisson sampling


def poisson_sample(n: int, q: Fraction, rng: RandomSource) -> np.ndarray:
    """The indices kept by Poisson sampling of ``n`` records at rate ``q`` (rational, ``0 < q ≤
    1``): record ``i`` is kept iff its base-``b`` digit ``U_i`` is below ``a`` (``q = a/b``), the
    digits coming from uniform integers ``rng.randbelow(b^m)`` (``b^m < 2⁶²``) — exact
    independent Bernoulli(q) draws from ``rng`` only (module docstring, step 1)."""
    q = Fraction(q)
    if not 0 < q <= 1:
        raise InvalidParameter(f"the sampling rate must be in (0, 1], got {q}")
    if n <= 0:
        return np.zeros(0, dtype=np.int64)
    if q == 1:
        return np.arange(n, dtype=np.int64)
    a, b = q.numerator, q.denominator
    m = 1
    while b ** (m + 1) < 2**62:
        m += 1
    if b**m >= 2**62:  # a huge denominator: one draw per record, in Python integers
        return np.array([i for i in range(n) if rng.randbelow(b) < a], dtype=np.int64)
    draws = -(-n // m)
    chunk = b**m
    values = np.array([rng.randbelow(chunk) for _ in range(draws)], dtype=np.int64)
    digits = np.empty((draws, m), dtype=np.int64)
    for j in range(m):
        digits[:, j] = values % b
        values = values // b
    return np.flatnonzero(digits.reshape(-1)[:n] < a).astype(np.int64)


# --------------------------------------------------------------------------- the mechanism


@dataclass
class DPSGDRelease:
    """The release of :class:`DPSGD`: the noisy integer gradient sums (``steps``, grid units:
    what the partition measures) and their post-processing — the model parameters ``params``
    after the last step."""

    steps: tuple[np.ndarray, ...]
    params: np.ndarray
    model: Any = field(repr=False)
    steps_per_epoch: int = 1
    #: In a Rényi lane: the run stopped at a stopping point because its lane refused to pay for
    #: the next stretch of steps (:meth:`DPSGD.release_in_lane`), not by the stopping rule.
    budget_stop: bool = False

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def epochs(self) -> Fraction:
        """Epochs run (steps / steps per epoch)."""
        return Fraction(len(self.steps), self.steps_per_epoch)

    def decision(self, features: Any) -> np.ndarray:
        return np.asarray(self.model.decision(self.params, np.asarray(features, dtype=float)))

    def predict(self, features: Any) -> np.ndarray:
        """Labels ±1 (0 logits predict +1)."""
        return np.where(self.decision(features) >= 0, 1.0, -1.0)

    def accuracy(self, features: Any, labels: Any) -> float:
        return float(np.mean(self.predict(features) == np.asarray(labels, dtype=float)))


class DPSGD(IterativeMechanism):
    """DP-SGD with Poisson sampling, exact discrete Gaussian noise on a grid and early stopping
    at epoch ends, charged by ODP (module docstring).

    Parameters
    ----------
    model:
        :class:`LogisticRegressionModel` or :class:`MLPModel`.
    n:
        The public (declared) number of records ``n₀``: the update divides the noisy sum by the
        expected batch size ``q·n₀``.  Under add/remove neighbours the data may have any size
        (its size is private and never used); under ``neighbours="replace-one"`` it must be ``n``.
    sampling_rate:
        ``q ∈ (0, 1]`` (exact rational; e.g. ``"1/100"``).
    noise_multiplier:
        ``σ > 0``: the noise's standard deviation parameter is ``σ`` times the clip norm.
    epochs:
        The most epochs to run; ``steps_per_epoch`` (default ``⌈1/q⌉``) steps each.
    delta:
        The ODP δ target, ``0 < δ < 1``: the declared δ is at most this.
    clip:
        ``C > 0``, the L2 clip norm of a record's gradient.
    learning_rate, weight_decay, stop_threshold:
        ``η > 0``, ``λ ≥ 0`` and the threshold of the stopping rule (finite floats;
        post-processing only).
    check_every:
        The stopping rule is evaluated every ``check_every`` epochs (the stopping points).
    granularity:
        The grid step ``g`` (default ``C/2¹⁶``); ``C/g`` must be between 1 and ``2²⁰``.
    neighbours:
        :attr:`odp.Neighbours.ADD_REMOVE` (default) or :attr:`~odp.Neighbours.REPLACE_ONE`, or
        their strings ``"add-remove"``, ``"replace-one"`` (module docstring); the relation the
        run's guarantee holds for, which its accountant must have.
    composition:
        The add/remove COMP of Lemma 11 (default :class:`~odp.composition.RDPComposition`).
    window:
        Optional public half-width ``N`` (grid units) of the clamp window; default: the covering
        window of the module docstring.
    limits, progress:
        :class:`odp.limits.Limits` for the up-front estimate; the progress bar argument.
    """

    name = "dpsgd"

    def __init__(self, model: Any, *, n: int, sampling_rate: Any, noise_multiplier: Any,
                 epochs: int, delta: Any, clip: Any = 1, learning_rate: Any = 1.0,
                 weight_decay: Any = 0.0, stop_threshold: Any = 0.0, check_every: int = 1,
                 steps_per_epoch: int | None = None, granularity: Any = None,
                 neighbours: Neighbours | str = Neighbours.ADD_REMOVE, composition: PrefixComposition | None = None,
                 window: int | None = None, limits: Limits | None = None, progress: Any = None):
        # ---- public parameters, all checked before anything is computed
        if not isinstance(model, (LogisticRegressionModel, MLPModel)):
            raise InvalidParameter("model must be a LogisticRegressionModel or an MLPModel")
        self.model = model
        self.n = parse_positive_int(n, name="n (the public number of records n0)")
        self.q = check_rate(sampling_rate)
        self.sigma = check_sigma(noise_multiplier)
        if self.sigma > MAX_NOISE_MULTIPLIER:
            raise InvalidParameter(f"the noise multiplier must be at most {MAX_NOISE_MULTIPLIER}, "
                                   f"got {noise_multiplier!r}")
        self.epochs = parse_positive_int(epochs, name="epochs")
        self.check_every = parse_positive_int(check_every, name="check_every")
        self.steps_per_epoch = (math.ceil(1 / self.q) if steps_per_epoch is None else
                                parse_positive_int(steps_per_epoch, name="steps_per_epoch"))
        self.delta_target = check_delta(delta)
        self.clip = parse_positive(clip, name="clip")
        self.learning_rate = _finite_float(learning_rate, name="learning_rate", positive=True)
        self.weight_decay = _finite_float(weight_decay, name="weight_decay")
        self.stop_threshold = _finite_float(stop_threshold, name="stop_threshold")
        self.neighbours = neighbours  # parsed, and fixed from now on (the property below)
        p = self.num_params = model.num_params
        if p > MAX_PARAMS:
            raise InvalidParameter(f"the model has {p} parameters; at most {MAX_PARAMS} are "
                                   "accepted")
        last = self.epochs * self.steps_per_epoch
        if last > MAX_STEPS:
            raise InvalidParameter(
                f"epochs × steps_per_epoch = {last:,} steps is above the limit of {MAX_STEPS:,} "
                "(MAX_STEPS); lower epochs or raise the sampling rate")
        stop_epochs = list(range(self.check_every, self.epochs + 1, self.check_every))
        if not stop_epochs or stop_epochs[-1] != self.epochs:
            stop_epochs.append(self.epochs)
        stops = [e * self.steps_per_epoch for e in stop_epochs]

        # ---- the grid (module docstring, step 3), exact
        self.granularity = (self.clip / 2**DEFAULT_GRID_BITS if granularity is None
                            else parse_positive(granularity, name="granularity"))
        units = self.clip / self.granularity
        if not 1 <= units <= MAX_GRID_UNITS:
            raise InvalidParameter(f"clip/granularity = {float(units):.4g} grid units must be "
                                   f"between 1 and {MAX_GRID_UNITS} (2**20): choose the grid step "
                                   "between clip/2**20 and clip")
        #: K: the exact bound on every contribution's squared L2 norm (grid units)
        self.sensitivity2 = math.ceil(units * units)
        self._radius = float_down(units)
        self._unit_cap = float(math.isqrt(self.sensitivity2))
        #: σ_u² = σ²K: the discrete Gaussian's variance parameter (grid units²), exact
        self.sigma2 = self.sigma * self.sigma * self.sensitivity2
        self._inv_g = 1.0 / float(self.granularity)
        self._scale = float(self.granularity / (self.q * self.n))

        # ---- the clamp window (finite output space)
        self.grid_margin = math.ceil(TAIL_SCALES * sigma_upper(self.sigma2))
        covered = COVERED_RECORDS * math.isqrt(self.sensitivity2) + self.grid_margin
        if window is None:
            half = covered
        else:
            if isinstance(window, bool) or not isinstance(window, int) or window < 1:
                raise InvalidParameter(f"window must be a positive integer (grid units), got "
                                       f"{window!r}")
            half = window
        if half >= 2**62:
            raise InvalidParameter("the clamp window exceeds 2**62 grid units; lower the noise "
                                   "multiplier or use a coarser grid")
        self.grid_window = Window(-half, half)

        # ---- cost estimate, then limits and progress
        self.limits = limits if limits is not None else Limits()
        self.progress = progress
        self.limits.check(self.estimate(stops[-1]))

        # ---- accounting: Lemma 11 with RDP (or the given COMP) as COMP
        inner = composition if composition is not None else RDPComposition()
        if not isinstance(inner, PrefixComposition):
            raise InvalidParameter("composition must be an odp.composition.PrefixComposition")
        self.composition = (ReplaceOneComposition(inner)
                            if self.neighbours is Neighbours.REPLACE_ONE else inner)
        spec = self._step_spec(stops[-1])
        steps = [spec] * stops[-1]
        share = self.delta_target / len(stops) * (1 - Fraction(1, 10**15))
        costs = [self.composition.epsilon_upper(steps[:k], share) for k in stops]
        super().__init__(self._noisy_step, stops=stops, steps=spec, costs=costs,
                         rule=PrefixDeltaSum(self.composition), name=self.name)
        #: Lemma 11's δ = Σ_i COMP(M_1..M_{k_i}; ε^{k_i}) (≤ the target by the choice of costs)
        self.lemma11_delta = self.guarantee.delta
        if self.lemma11_delta > self.delta_target:  # pragma: no cover - guarded by the share
            raise InvalidParameter("internal: the Lemma 11 delta exceeds the target")
        # declare the (short) target: any δ above a valid one is valid
        self._guarantee = ODP(output_length, self.guarantee.costs, self.delta_target)
        self.details = {**self.details, "delta": str(self.delta_target),
                        "lemma11_delta": str(self.lemma11_delta)}
        seal(self, DPSGD, ok=trusted_composition(inner))

    @property
    def neighbours(self) -> Neighbours:
        """The relation the guarantee holds for (:mod:`odp.neighbours`), fixed when the
        mechanism is built: its steps are analysed for add/remove neighbours and, for
        replace-one, converted by group privacy in the constructor, so relabelling an instance
        would state a guarantee nobody computed."""
        return self._neighbours

    @neighbours.setter
    def neighbours(self, value: Any) -> None:
        if "_neighbours" in self.__dict__:
            raise InvalidParameter(
                "a DPSGD's neighbouring relation is fixed when it is built (its accounting "
                "depends on it): build DPSGD(..., neighbours=...) for another relation")
        self._neighbours = Neighbours.parse(value)

    # ------------------------------------------------------------------ accounting
    def _step_spec(self, count: int) -> StepSpec:
        """One step's description: the subsampled discrete Gaussian, and a valid (ε, δ)-DP
        guarantee of one step (for rules that need one; the RDP COMP ignores it) — both for
        **add/remove** neighbours, whatever the run's relation: under replace-one neighbours
        :class:`~odp.composition.ReplaceOneComposition` converts the composed steps by group
        privacy, exactly once (converting each step here as well counted it twice)."""
        from ..subsampled_rdp import subsampled_discrete_gaussian_epsilon

        mech = {"mechanism": "subsampled_discrete_gaussian", "q": str(self.q),
                "sigma": str(self.sigma), "sensitivity2": str(self.sensitivity2),
                "sigma2": str(self.sigma2), "neighbours": Neighbours.ADD_REMOVE.value}
        d1 = self.delta_target / (2 * count)
        e1 = subsampled_discrete_gaussian_epsilon(self.q, self.sigma, 1, d1)[0]
        if self.neighbours is Neighbours.REPLACE_ONE:
            # Leave room for group privacy's factor: ReplaceOneComposition multiplies the
            # composed δ by 1 + e^{ε'} (its margin 1/1000 on ε'), so that a COMP adding the
            # steps' δ (basic composition) certifies k steps when (1 + e^h)·k·δ_1 ≤ δ/2 with
            # h ≥ k·ε_1 + 1/1000.  Every (ε_1, δ_1) tried is a valid one-step guarantee (ε_1
            # at δ_1), so the last is kept if h would pass 64 (no useful basic bound there).
            base, margin = d1, Fraction(1, 1000)
            hint = count * e1 + margin
            for _ in range(20):
                if hint > 64:
                    break
                d1 = base / (1 + exp_bracket(hint)[1])
                e1 = subsampled_discrete_gaussian_epsilon(self.q, self.sigma, 1, d1)[0]
                if count * e1 + margin <= hint:
                    break
                hint = count * e1 + margin
        return StepSpec(e1, d1, mech)

    def estimate(self, steps: int | None = None) -> Estimate:
        """Estimated time and memory of a run of ``steps`` (default ``k_n``) steps on ``n₀``
        records, from the public parameters only."""
        k = self.stops[-1] if steps is None and hasattr(self, "stops") else int(steps or 0)
        p = self.num_params
        batch = float(self.q) * self.n
        transcendental = getattr(self.model, "hidden", 0) + 1
        per_step = (p * _SECONDS_PER_NOISE + self.n * _SECONDS_PER_RECORD
                    + batch * (p * _SECONDS_PER_ENTRY + transcendental
                               * _SECONDS_PER_TRANSCENDENTAL))
        memory = 8 * (4 * batch * p + k * p + 4 * self.n * (self.model.dim + 1)) + 2**24
        return Estimate(f"DP-SGD ({k:,} steps, {p} parameters, n0 = {self.n:,})",
                        1.0 + k * per_step, memory, knobs="epochs, sampling_rate, model size")

    def clamp_bound(self, records: int = COVERED_RECORDS) -> Fraction:
        """A rigorous upper bound of P(the clamp changes a run's release) on every database of at
        most ``records`` records: ``k_n·p·P(|Z| > N − records·⌊√K⌋)`` (union bound;
        :func:`odp.mechanisms.window.gaussian_clamp_bound`), capped at 1."""
        margin = self.grid_window.hi - records * math.isqrt(self.sensitivity2)
        if margin < 1:
            return Fraction(1)
        bound = self.stops[-1] * self.num_params * gaussian_clamp_bound(self.sigma2, margin)
        return min(bound, Fraction(1))

    def params(self) -> dict[str, Any]:
        return {**super().params(), **self.model.describe(), "n0": self.n,
                "sampling_rate": str(self.q), "noise_multiplier": str(self.sigma),
                "clip": str(self.clip), "granularity": str(self.granularity),
                "sensitivity2": self.sensitivity2, "sigma2": str(self.sigma2),
                "steps_per_epoch": self.steps_per_epoch, "epochs": self.epochs,
                "check_every": self.check_every, "neighbours": self.neighbours.value,
                "grid_window": [str(self.grid_window.lo), str(self.grid_window.hi)],
                "learning_rate": self.learning_rate, "weight_decay": self.weight_decay,
                "stop_threshold": self.stop_threshold, "delta_target": str(self.delta_target)}

    # ------------------------------------------------------------------ data
    def check_public(self, data: Any) -> None:
        """``data = (features, labels)``: features of shape ``(rows, dim)``, as many labels, all
        ±1; under replace-one neighbours ``rows = n`` (public).  Under add/remove the number of
        rows is private and not checked."""
        features, labels = unpack(data, ("features", "labels"), mechanism=self.name)
        shape = array_shape(features, what="the training features")
        label_shape = array_shape(labels, what="the training labels")
        dim = self.model.dim
        if len(shape) != 2 or shape[1] != dim or label_shape != shape[:1]:
            raise InvalidParameter(
                f"expected training features of shape (rows, {dim}) and one label per row, got "
                f"features of shape {shape} and labels of shape {label_shape}; nothing was "
                "reserved or charged")
        if self.neighbours is Neighbours.REPLACE_ONE and shape[0] != self.n:
            raise InvalidParameter(
                f"under replace-one neighbours the number of records is public: expected "
                f"{self.n}, got {shape[0]}; nothing was reserved or charged")
        check_sign_labels(labels, what="training")

    def _arrays(self, data: Any) -> tuple[np.ndarray, np.ndarray]:
        self.check_public(data)  # second line (release called directly)
        features, labels = data
        return np.asarray(features, dtype=float), np.asarray(labels, dtype=float)

    # ------------------------------------------------------------------ one step
    def grid_vectors(self, params: np.ndarray, features: np.ndarray,
                     labels: np.ndarray) -> np.ndarray:
        """The integer contributions ``v_i`` of the given rows at ``params`` (module docstring,
        steps 2–3): int64, shape ``(rows, p)``, every row with ``Σ_j v_ij² ≤ K`` exactly."""
        x = np.asarray(features, dtype=float)
        y = np.asarray(labels, dtype=float)
        rows = x.shape[0]
        if rows == 0:
            return np.zeros((0, self.num_params), dtype=np.int64)
        with np.errstate(all="ignore"):
            u = self.model.gradients(np.asarray(params, dtype=float), x, y) * self._inv_g
            norm2 = _row_sum_squares(u)
            finite = np.isfinite(norm2)
            u[~finite] = 0.0
            norm = np.sqrt(np.where(finite, norm2, 0.0))
            scale = np.where(norm > self._radius, self._radius / np.maximum(norm, 1e-300), 1.0)
            v = np.trunc(u * scale[:, None])  # toward zero: |v_ij| ≤ |u_ij|
            inside = np.all(np.abs(v) <= self._unit_cap, axis=1)  # NaN fails: zeroed
            v[~inside] = 0.0
        vi = v.astype(np.int64)
        squares = np.sum(vi * vi, axis=1)  # exact: |v_ij| ≤ 2²⁰, p ≤ 10⁶
        vi[squares > self.sensitivity2] = 0
        return vi

    def grid_sum(self, params: np.ndarray, features: np.ndarray, labels: np.ndarray,
                 batch: np.ndarray) -> np.ndarray:
        """``S = Σ_{i ∈ batch} v_i`` (int64, exact)."""
        vectors = self.grid_vectors(params, features[batch], labels[batch])
        return np.asarray(np.sum(vectors, axis=0, dtype=np.int64))

    def noisy_sum(self, params: np.ndarray, features: np.ndarray, labels: np.ndarray,
                  rng: RandomSource) -> np.ndarray:
        """One released output ``s_k``: Poisson batch, exact integer sum, discrete Gaussian noise
        per coordinate, clamp (module docstring, steps 1–4)."""
        batch = poisson_sample(features.shape[0], self.q, rng)
        total = self.grid_sum(params, features, labels, batch)
        clamp = self.grid_window.clamp  # after the noise: post-processing
        return np.array([clamp(int(t) + discrete_gaussian(self.sigma2, rng)) for t in total],
                        dtype=np.int64)

    def update(self, params: np.ndarray, output: np.ndarray) -> np.ndarray:
        """``w ← w − η(g·s/(q n₀) + λw)`` (post-processing)."""
        gradient = output.astype(float) * self._scale
        return np.asarray(params - self.learning_rate * (gradient + self.weight_decay * params))

    def iterates(self, history: Sequence[np.ndarray]) -> list[np.ndarray]:
        """``w_0, w_1, …`` from the released outputs (post-processing)."""
        out = [self.model.initial_params()]
        for s in history:
            out.append(self.update(out[-1], s))
        return out

    def epoch_gradient(self, history: Sequence[np.ndarray]) -> np.ndarray:
        """The mean noisy gradient of the last epoch, ``g·Σ s_k / (steps_per_epoch·q·n₀)``,
        from the released outputs only."""
        recent = history[-self.steps_per_epoch:]
        total = np.sum(np.stack(recent).astype(float), axis=0)
        return np.asarray(total * self._scale / len(recent))

    def stops_now(self, history: Sequence[np.ndarray]) -> bool:
        """The stopping rule ``h^{k_i}``: the epoch's mean noisy gradient has L2 norm below
        ``stop_threshold``."""
        return float(np.linalg.norm(self.epoch_gradient(history))) < self.stop_threshold

    def noise_norm(self) -> float:
        """Typical L2 norm of the noise in :meth:`epoch_gradient`:
        ``√p·σ·C/(q·n₀·√steps_per_epoch)`` (for choosing ``stop_threshold``)."""
        per_coordinate = float(self.sigma * self.clip / (self.q * self.n))
        return math.sqrt(self.num_params) * per_coordinate / math.sqrt(self.steps_per_epoch)

    def _noisy_step(self, history: tuple[Any, ...], data: Any, rng: RandomSource) -> np.ndarray:
        """Alg. 3's ``M_k(history, x)`` (used by :meth:`release` through the same code path)."""
        x, y = self._arrays(data)
        return self.noisy_sum(self.iterates(history)[-1], x, y, rng)

    # ------------------------------------------------------------------ Rényi lanes
    def step_rdp(self, alpha: Any) -> Fraction:
        """One step's RDP at the (integer) order α: the Poisson-subsampled discrete Gaussian,
        add/remove neighbours (:func:`odp.composition.step_rdp`; module docstring), an exact
        upper bound rounded up."""
        from ..composition import step_rdp

        return step_rdp(self._step_spec(self.stops[-1]), alpha)

    def lane_guarantees(self) -> list[Any]:
        """What a laned ledger may charge, best first: each step's RDP curve (a Rényi lane,
        paid stretch by stretch as the run goes: :meth:`release_in_lane`), then the ODP
        guarantee of the whole run (Lemma 11, the ODP lane).  Under replace-one neighbours only
        the latter: the Rényi curve is an add/remove bound."""
        if self.neighbours is not Neighbours.ADD_REMOVE:
            return [self.guarantee]
        return [self.step_rdp, self.guarantee]

    def release_in_lane(self, data: Data, rng: RandomSource, pay: Any) -> Release:
        """Alg. 3 in a Rényi lane: before each stretch of steps up to the next stopping point,
        ``pay(n)`` charges those ``n`` steps' RDP to the lane (the accountant's callback; it
        raises :class:`~odp.errors.BudgetExceeded` when the lane refuses).  A run that stops —
        by the stopping rule, or because the lane refused the next stretch (``budget_stop``) —
        has paid for exactly the steps it ran; no δ is split over the stops (Lemma 11 is not
        used).  A refusal before the first step draws nothing and is raised."""
        from ..errors import BudgetExceeded
        from ..progress import Reporter

        x, y = self._arrays(data)
        params = self.model.initial_params()
        history: list[np.ndarray] = []
        done, cut = 0, False
        with Reporter(self.progress, self.stops[-1], "DP-SGD", unit="step") as bar:
            for i, stop in enumerate(self.stops):
                try:
                    pay(stop - done)
                except BudgetExceeded:
                    if done == 0:
                        raise
                    cut = True
                    break
                for _ in range(done, stop):
                    output = self.noisy_sum(params, x, y, rng)
                    history.append(output)
                    params = self.update(params, output)
                    bar.advance()
                done = stop
                if i < len(self.stops) - 1 and self.stops_now(history):
                    break
        return DPSGDRelease(tuple(history), params, self.model, self.steps_per_epoch, cut)

    def release(self, data: Data, rng: RandomSource) -> Release:
        """Alg. 3: run the steps, evaluate the stopping rule at each stopping point but the last,
        return the outputs so far (and the model they determine)."""
        from ..progress import Reporter

        x, y = self._arrays(data)
        params = self.model.initial_params()
        history: list[np.ndarray] = []
        early = set(self.stops[:-1])
        with Reporter(self.progress, self.stops[-1], "DP-SGD", unit="step") as bar:
            for k in range(1, self.stops[-1] + 1):
                output = self.noisy_sum(params, x, y, rng)
                history.append(output)
                params = self.update(params, output)
                bar.advance()
                if k in early and self.stops_now(history):
                    break
        return DPSGDRelease(tuple(history), params, self.model, self.steps_per_epoch)


# odp's own mechanism and models (odp.mechanisms.builtin): a DP-SGD round is built-in only with
# one of odp's models and composition theorems
register(LogisticRegressionModel, None)
register(MLPModel, None)
register(DPSGD, "dpsgd", parts={"model": (LogisticRegressionModel, MLPModel)})
