"""Basic noise mechanisms on exact samplers: Laplace and Gaussian on a grid, randomized
response, and the toy mechanism M_toy of the paper's introduction.

The grid.  A real-valued query ``f`` with sensitivity Δ is released on the grid ``g·ℤ``: the
value is rounded to ``n(x) = ⌊f(x)/g + 1/2⌋`` and integer noise is added, so the release is
``g·(n(x) + Z)`` — an exact ``Fraction``.  For neighbours, ``|f(x) − f(x')| ≤ Δ`` implies
``|n(x) − n(x')| ≤ m := ⌈Δ/g⌉`` (because ``⌊u + k⌋ = ⌊u⌋ + k`` for integers ``k``), so the
integer noise is calibrated to the integer sensitivity ``m``.  With the default ``g = Δ/1000``,
``m = 1000`` and rounding costs no privacy.  No floating point touches the noise.
The query itself must have sensitivity Δ *as computed* (floating-point sums can exceed their
mathematical sensitivity; use exact or integer arithmetic in queries where that matters).

The finite output space.  The release is clamped to a declared window of grid units
(:mod:`odp.mechanisms.window`): ``g·clamp(n(x) + Z, lo, hi)``, after the noise and with a public
window, so it is post-processing and the guarantee is unchanged; the output space is the finite
set ``g·{lo, …, hi}`` and Theorem 7 for finite output spaces (Hartmann et al. 2022, Alg. 1)
applies.  The default window ``[−N, N]``, ``N = 2¹²⁸·m + ⌈128·s⌉`` (``s`` the noise scale in grid
units), covers every query value ``|f(x)| ≤ 2¹²⁸·Δ``: for those, clamping changes the release
with probability below ``2⁻¹⁸³`` (:meth:`_GridMechanism.clamp_bound`).  ``window=(lo, hi)`` (query
units, snapped outward to the grid) declares another window; the release then always lies in it.

A release is an :class:`odp.readable.ExactValue`: the exact ``Fraction``, printed as its exact
decimal (``4.717``).
"""

from __future__ import annotations

import math
from abc import abstractmethod
from fractions import Fraction
from typing import Any, Callable, Sequence

from ..budget import parse_delta, parse_epsilon, parse_positive, to_fraction
from ..errors import InvalidParameter
from ..neighbours import Neighbours
from ..gaussian_dp import calibrate_discrete_gaussian, discrete_gaussian_delta_upper
from ..guarantees import DP, ODP, ZCDP
from ..readable import ExactValue
from ..samplers import bernoulli_exp, discrete_gaussian, discrete_laplace
from .base import BOTTOM, Mechanism, query_name
from .builtin import register, seal
from .window import (
    Window,
    default_grid_window,
    gaussian_clamp_bound,
    laplace_clamp_bound,
    noise_margin,
    sigma_upper,
    user_window,
)
from ..types import Data, RandomSource, Release

__all__ = [
    "LaplaceMechanism",
    "GaussianMechanism",
    "RandomizedResponse",
    "ToyMechanism",
    "value_or_bottom",
]


def value_or_bottom(release: Any) -> str:
    """The ODP partition {values, {⊥}} of M_toy, PTR and test-and-release mechanisms."""
    return "bottom" if release is BOTTOM else "value"


def exact_value(value: Any, *, name: str = "query result") -> Fraction:
    """The exact rational value of a query result: ``bool`` as 0/1, and every numeric type
    (including floats of any width) at its exact binary value (:func:`odp.budget.to_fraction`
    without the float warning)."""
    if isinstance(value, bool):
        return Fraction(int(value))
    if isinstance(value, str):
        raise InvalidParameter(f"{name} must be a real number, got the string {value!r}")
    return to_fraction(value, name=name, warn=False)


class _GridMechanism(Mechanism):
    """Shared grid logic: sensitivity Δ, granularity g, integer sensitivity m = ⌈Δ/g⌉, and the
    window ``[lo, hi]`` (grid units) the release is clamped to (module docstring)."""

    neighbours = Neighbours.REPLACE_ONE  #: what its guarantee is stated for (odp.neighbours)

    #: the declared window of grid units; set by each subclass once its noise scale is known
    window: Window

    def __init__(self, query: Callable[[Any], Any], sensitivity: Any, granularity: Any,
                 window: Any = None):
        if not callable(query):
            raise InvalidParameter("query must be a function data -> number")
        self.query = query
        self.sensitivity = parse_positive(sensitivity, name="sensitivity")
        self.granularity = (self.sensitivity / 1000 if granularity is None
                            else parse_positive(granularity, name="granularity"))
        self.units = math.ceil(self.sensitivity / self.granularity)
        self._user_window = (None if window is None
                             else user_window(window, self.granularity))

    def _set_window(self, scale: Fraction | int) -> None:
        """The user's window, or the default for noise of scale ``scale`` grid units."""
        self.window = (self._user_window if self._user_window is not None
                       else default_grid_window(self.units, scale))

    def grid_value(self, data: Any) -> int:
        """``n(x) = ⌊f(x)/g + 1/2⌋``: the query value in grid units before noise."""
        value = exact_value(self.query(data))
        return math.floor(value / self.granularity + Fraction(1, 2))

    @abstractmethod
    def _noise(self, rng: RandomSource) -> int:
        """One draw of the integer noise Z (grid units)."""

    def release(self, data: Any, rng: RandomSource) -> ExactValue:
        """``g·clamp(n(x) + Z, lo, hi)``: the noise first, then the (public) clamp."""
        n = self.grid_value(data)
        return ExactValue(self.granularity * self.window.clamp(n + self._noise(rng)))

    def _grid_params(self) -> dict[str, Any]:
        return {"query": query_name(self.query), "sensitivity": str(self.sensitivity),
                "granularity": str(self.granularity),
                "window": self.window.params(self.granularity)}


class LaplaceMechanism(_GridMechanism):
    """ε-DP Laplace mechanism on the grid ``g·ℤ`` (discrete Laplace noise of scale ``t = m/ε``
    grid units, i.e. ≈ Δ/ε in the query's units), released as ``g·clamp(n(x) + Z, lo, hi)``.

    Output space: ``g·{lo, …, hi}``.  Default window ``[−N, N]``, ``N = 2¹²⁸·m + ⌈128·t⌉``: for
    every query value ``|f(x)| ≤ 2¹²⁸·Δ``, P(clamping changes the release) ``≤ 2e^{−128} <
    2⁻¹⁸³`` (:meth:`clamp_bound`).  ``window=(lo, hi)``: another public window (query units,
    snapped outward to the grid), e.g. ``(0, n)`` for a count of at most n records."""

    name = "laplace"

    def __init__(self, query: Callable[[Any], Any], *, epsilon: Any, sensitivity: Any = 1,
                 granularity: Any = None, window: Any = None):
        super().__init__(query, sensitivity, granularity, window)
        self.epsilon = parse_positive(epsilon, name="epsilon")
        #: discrete Laplace scale in grid units: P[Z = z] ∝ exp(−|z| / scale_units)
        self.scale_units = Fraction(self.units) / self.epsilon
        self._set_window(self.scale_units)
        self._guarantee = DP(self.epsilon)
        seal(self, LaplaceMechanism)

    def clamp_bound(self) -> Fraction:
        """A rigorous upper bound of P(clamping changes the release) for every query value
        ``|f(x)| ≤ 2¹²⁸·Δ`` with the default window: ``2·e^{−(K+1)/s} < 2⁻¹⁸³``,
        ``K = ⌈128·s⌉`` (:func:`odp.mechanisms.window.laplace_clamp_bound`)."""
        return laplace_clamp_bound(self.scale_units, noise_margin(self.scale_units))

    @property
    def guarantee(self) -> DP:
        return self._guarantee

    @property
    def scale(self) -> Fraction:
        """Noise scale in the query's units (``g·m/ε``)."""
        return self.granularity * self.scale_units

    def params(self) -> dict[str, Any]:
        return {**self._grid_params(), "epsilon": str(self.epsilon)}

    def _noise(self, rng: RandomSource) -> int:
        return discrete_laplace(self.scale_units, rng)


class GaussianMechanism(_GridMechanism):
    """(ε, δ)-DP Gaussian mechanism on the grid (discrete Gaussian noise, CKS 2020).

    Give ``epsilon`` and ``delta`` to calibrate σ (the smallest σ², to 4 significant digits,
    whose exact discrete-Gaussian δ(ε) is ≤ δ), or the noise — ``sigma`` in the query's units,
    or ``noise_multiplier`` = σ / sensitivity (the field's convention) — and ``epsilon`` to
    declare δ(ε) computed for that σ (rounded up).  ``sensitivity`` is the L2 sensitivity (here
    of a scalar query).

    Released as ``g·clamp(n(x) + Z, lo, hi)``; output space ``g·{lo, …, hi}``.  Default window
    ``[−N, N]``, ``N = 2¹²⁸·m + ⌈128·σ̄⌉`` (``σ̄ = ⌊√⌈σ²⌉⌋ + 1 ≥ σ``, grid units): for every
    query value ``|f(x)| ≤ 2¹²⁸·Δ``, P(clamping changes the release) ``< 2·e^{−8192}·(1 + σ/128)
    < 2⁻¹¹⁰⁰⁰`` (:meth:`clamp_bound`).  ``window=(lo, hi)``: another public window (query
    units, snapped outward to the grid)."""

    name = "gaussian"

    def __init__(self, query: Callable[[Any], Any], *, epsilon: Any, delta: Any = None,
                 sigma: Any = None, noise_multiplier: Any = None, sensitivity: Any = 1,
                 granularity: Any = None, window: Any = None):
        super().__init__(query, sensitivity, granularity, window)
        self.epsilon = parse_positive(epsilon, name="epsilon")
        if self.epsilon > self.MAX_EPSILON:
            raise InvalidParameter(
                f"epsilon={epsilon} is above {self.MAX_EPSILON}, the largest ε for which odp "
                "bounds the discrete Gaussian's δ (exp(ε) must be a finite float); such an ε "
                "protects nothing")
        try:
            declared = self._calibrate(epsilon, delta, sigma, noise_multiplier)
        except ArithmeticError as exc:  # float over/underflow in the δ bound: say which input
            raise InvalidParameter(
                f"epsilon={epsilon}, sigma={sigma}, noise_multiplier={noise_multiplier}, "
                f"sensitivity={sensitivity}: outside the range where odp can bound δ "
                f"({type(exc).__name__}); keep σ within 1e-6..1e100 grid units") from None
        self._set_window(sigma_upper(self.sigma2_units))
        self._guarantee = DP(self.epsilon, declared)
        seal(self, GaussianMechanism)

    #: Largest ε accepted (the δ bound evaluates exp(ε) in floating point).
    MAX_EPSILON = 700
    #: σ² in grid units (σ/granularity)² must lie in this range (float-safe δ bound).
    SIGMA2_UNITS_RANGE = (Fraction(1, 10**12), Fraction(10**200))

    def _calibrate(self, epsilon: Any, delta: Any, sigma: Any, noise_multiplier: Any) -> Fraction:
        """Set ``sigma2_units`` and return the declared δ."""
        if noise_multiplier is not None:
            if sigma is not None:
                raise InvalidParameter("give sigma or noise_multiplier, not both")
            sigma = parse_positive(noise_multiplier, name="noise_multiplier") * self.sensitivity
        if sigma is None:
            if delta is None:
                raise InvalidParameter("give delta (to calibrate sigma) or sigma")
            target = parse_delta(delta)
            if target == 0:
                raise InvalidParameter("the Gaussian mechanism needs delta > 0")
            self.sigma2_units = calibrate_discrete_gaussian(self.epsilon, target, self.units)
            declared = target
        else:
            s = parse_positive(sigma, name="sigma") / self.granularity
            self.sigma2_units = s * s
            low, high = self.SIGMA2_UNITS_RANGE
            if not low <= self.sigma2_units <= high:
                where = "below 1e-6" if self.sigma2_units < low else "above 1e100"
                raise InvalidParameter(
                    f"sigma={sigma} is {where} grid units (granularity {self.granularity}); "
                    "odp bounds δ for σ between 1e-6 and 1e100 grid units (set granularity= "
                    "to move the grid)")
            bound = discrete_gaussian_delta_upper(self.epsilon, self.sigma2_units, self.units)
            if delta is not None and bound > parse_delta(delta):
                raise InvalidParameter(
                    f"sigma={sigma} gives delta={float(bound):.3g} at epsilon={self.epsilon}, "
                    f"more than the requested {delta}"
                )
            if bound >= 1:
                raise InvalidParameter(f"sigma={sigma} is too small for epsilon={self.epsilon}")
            declared = parse_delta(delta) if delta is not None else bound
        return declared

    @property
    def guarantee(self) -> DP:
        return self._guarantee

    @property
    def zcdp(self) -> ZCDP:
        """The exact zCDP of the noise actually drawn: ρ = m²/(2σ²) for the discrete Gaussian
        of variance ``sigma2_units`` with integer sensitivity ``m`` on the grid (Canonne, Kamath,
        Steinke 2020, Thm. 4; Thm. 14 for vectors) — what a zCDP lane charges
        (:mod:`odp.filters.lanes`)."""
        m = Fraction(self.units)
        return ZCDP(m * m / (2 * self.sigma2_units))

    def lane_guarantees(self) -> list[ZCDP | DP]:
        """The guarantees a laned ledger may charge, best first: the exact ρ (zCDP or Rényi
        lane), then the declared (ε, δ) (ODP or advanced-composition lane)."""
        return [self.zcdp, self._guarantee]

    @property
    def sigma(self) -> float:
        """σ in the query's units (for display)."""
        return math.sqrt(self.sigma2_units) * float(self.granularity)

    def params(self) -> dict[str, Any]:
        return {**self._grid_params(), "epsilon": str(self.epsilon),
                "delta": str(self._guarantee.delta), "sigma2_units": str(self.sigma2_units)}

    def clamp_bound(self) -> Fraction:
        """A rigorous upper bound of P(clamping changes the release) for every query value
        ``|f(x)| ≤ 2¹²⁸·Δ`` with the default window: ``2·e^{−k²/(2σ²)}·(1 + σ²/k)`` with
        ``k = ⌈128·σ̄⌉ + 1 > 128σ``, below ``2⁻¹¹⁰⁰⁰`` for every accepted σ
        (:func:`odp.mechanisms.window.gaussian_clamp_bound`)."""
        return gaussian_clamp_bound(self.sigma2_units,
                                    noise_margin(sigma_upper(self.sigma2_units)))

    def _noise(self, rng: RandomSource) -> int:
        return discrete_gaussian(self.sigma2_units, rng)


class RandomizedResponse(Mechanism):
    """ε-DP k-ary randomized response: the true category with probability
    ``e^ε / (e^ε + k − 1)``, each other category with probability ``1 / (e^ε + k − 1)``.
    Output space: the k declared categories (finite by construction).

    Sampled exactly: draw a uniform category; keep it if it is the true one, else keep it with
    probability ``e^{−ε}`` (an exact Bernoulli(exp(−ε))), otherwise repeat."""

    neighbours = Neighbours.REPLACE_ONE  #: what its guarantee is stated for (odp.neighbours)

    name = "randomized_response"

    def __init__(self, query: Callable[[Any], Any], *, epsilon: Any,
                 categories: Sequence[Any] = (False, True)):
        if not callable(query):
            raise InvalidParameter("query must be a function data -> category")
        self.query = query
        self.epsilon = parse_epsilon(epsilon)
        try:
            self.categories = tuple(categories)
            distinct = len(set(self.categories))
        except TypeError:
            raise InvalidParameter("categories must be a sequence of hashable values, got "
                                   f"{categories!r}") from None
        if len(self.categories) < 2 or distinct != len(self.categories):
            raise InvalidParameter("randomized response needs at least 2 distinct categories")
        self._guarantee = DP(self.epsilon)
        seal(self, RandomizedResponse)

    @property
    def guarantee(self) -> DP:
        return self._guarantee

    def params(self) -> dict[str, Any]:
        return {"query": query_name(self.query), "epsilon": str(self.epsilon),
                "categories": [repr(c) for c in self.categories]}

    def release(self, data: Data, rng: RandomSource) -> Release:
        truth = self.query(data)
        if truth not in self.categories:
            raise InvalidParameter(f"the query returned {truth!r}, not one of the categories")
        k = len(self.categories)
        while True:
            pick = self.categories[rng.randbelow(k)]
            if pick == truth or bernoulli_exp(self.epsilon, rng):
                return pick


class ToyMechanism(Mechanism):
    """M_toy (Hartmann et al. 2022, Sec. 1): flip a fair coin; heads → the ε-DP Laplace release of
    the query, tails → ⊥.  It is (𝒫, ℰ, 0)-ODP with 𝒫 = {values, {⊥}}, ℰ(values) = ε and
    ℰ({⊥}) = 0 (Def. 2): a ⊥ reveals nothing, so it costs nothing.

    Output space: ``{⊥} ∪ g·{lo, …, hi}``, the Laplace release clamped to its window exactly as
    in :class:`LaplaceMechanism` (same default, same ``window=``)."""

    neighbours = Neighbours.REPLACE_ONE  #: what its guarantee is stated for (odp.neighbours)

    name = "toy"

    def __init__(self, query: Callable[[Any], Any], *, epsilon: Any, sensitivity: Any = 1,
                 granularity: Any = None, window: Any = None):
        self.laplace = LaplaceMechanism(query, epsilon=epsilon, sensitivity=sensitivity,
                                        granularity=granularity, window=window)
        self.epsilon = self.laplace.epsilon
        self._guarantee = ODP(value_or_bottom, {"value": self.epsilon, "bottom": 0}, 0)
        seal(self, ToyMechanism)

    @property
    def guarantee(self) -> ODP:
        return self._guarantee

    def params(self) -> dict[str, Any]:
        return self.laplace.params()

    def release(self, data: Data, rng: RandomSource) -> Release:
        if rng.randbelow(2) == 0:
            return BOTTOM
        return self.laplace.release(data, rng)


# odp's own mechanisms (odp.mechanisms.builtin: identity from the object, never from a name)
register(LaplaceMechanism, "laplace")
register(GaussianMechanism, "gaussian")
register(RandomizedResponse, "randomized_response")
register(ToyMechanism, "toy", parts={"laplace": LaplaceMechanism})
