"""Finite output spaces by construction: releases clamped to a declared window.

Theorem 7 (Hartmann et al. 2022, the composition experiment of Alg. 1) is machine-checked for
**finite** output spaces (``Odp/Core``; ``docs/lean.md``).  So that it covers every run of a
built-in mechanism, each release that would range over an unbounded grid is clamped to a declared
window of grid units:

    release = g · clamp(n(x) + Z, lo, hi),    clamp(k, lo, hi) = min(max(k, lo), hi).

The clamp is applied **after** the noise and its window ``[lo, hi]`` is a public parameter,
fixed before the data is seen and recorded in the mechanism's ``params()`` (so in the ledger and
in certificates).  It is therefore post-processing: a clamped value is still a value (every ODP
partition keeps its labels), so the declared guarantee is unchanged.  All arithmetic is on
integers and Fractions.

**Default windows.**  A default window is so wide that, for every query value in a stated range,
clamping changes the release with probability below ``2⁻¹⁰⁰`` (in fact below ``2⁻¹⁸³``):
with noise of scale ``s`` grid units and a *covered* range ``|n(x)| ≤ C``, the window is
``[−N, N]`` with ``N = C + K`` and margin ``K = ⌈128·s⌉``.  Then clamping changes the release
only if ``|Z| ≥ K + 1 > 128·s``, and

* discrete Laplace (``P(z) ∝ r^{|z|}``, ``r = e^{−1/s}``, :func:`odp.samplers.discrete_laplace`):
  ``P(|Z| ≥ k) = 2·r^k/(1 + r) < 2·e^{−k/s} < 2·e^{−128} < 2⁻¹⁸³`` (:func:`laplace_clamp_bound`);
* discrete Gaussian (``P(z) ∝ e^{−z²/(2σ²)}``, :func:`odp.samplers.discrete_gaussian`, with
  ``s ≥ σ``): the normaliser is ≥ 1 (its ``z = 0`` term) and for ``k ≥ 1``
  ``Σ_{z≥k} e^{−z²/(2σ²)} ≤ Σ_{j≥0} e^{−(k² + 2kj)/(2σ²)} = e^{−k²/(2σ²)}/(1 − e^{−k/σ²})
  ≤ e^{−k²/(2σ²)}·(1 + σ²/k)`` (as ``1 − e^{−x} ≥ x/(1 + x)``), so with ``k > 128σ``
  ``P(|Z| ≥ k) < 2·e^{−8192}·(1 + σ/128)``, below ``2⁻¹¹⁰⁰⁰`` for the σ ≤ 10¹⁰⁰ grid units
  that :class:`~odp.mechanisms.GaussianMechanism` accepts (:func:`gaussian_clamp_bound`).

Each mechanism's docstring states its covered range; ``docs/mechanisms.md`` ("Finite output
spaces") lists them all.  A user window (``window=(lo, hi)`` in the query's units) is snapped
outward to the grid (``lo ↦ g·⌊lo/g⌋``, ``hi ↦ g·⌈hi/g⌉``); it is post-processing too, and the
release then lies in it always.

For audits, :func:`clamped_laplace_law` is the exact law of ``clamp(c + Z, lo, hi)`` (closed form,
exact rationals for a rational ``r``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Hashable

from ..budget import to_fraction
from ..errors import InvalidParameter
from ..rational import exp_bracket
from ..readable import decimal_text
from ..samplers import discrete_laplace_tail

__all__ = [
    "Window",
    "TAIL_SCALES",
    "COVERED_SENSITIVITIES",
    "noise_margin",
    "default_grid_window",
    "user_window",
    "laplace_clamp_bound",
    "gaussian_clamp_bound",
    "sigma_upper",
    "clamped_laplace_law",
]

#: The margin of a default window, in noise scales: clamping needs ``|Z| > TAIL_SCALES·s``.
TAIL_SCALES = 128

#: A grid mechanism's default window covers every query value ``|f(x)| ≤ 2¹²⁸·Δ``.
COVERED_SENSITIVITIES = 2**128


@dataclass(frozen=True)
class Window:
    """The integer window ``[lo, hi]`` (grid units, ``lo < hi``) a release is clamped to."""

    lo: int
    hi: int

    def __post_init__(self) -> None:
        if not self.lo < self.hi:  # pragma: no cover - every constructor checks first
            raise InvalidParameter(f"a window needs lo < hi, got [{self.lo}, {self.hi}]")

    def clamp(self, k: int) -> int:
        """``min(max(k, lo), hi)``."""
        return self.lo if k < self.lo else self.hi if k > self.hi else k

    def __contains__(self, k: object) -> bool:
        return isinstance(k, int) and self.lo <= k <= self.hi

    @property
    def size(self) -> int:
        """The number of possible outputs, ``hi − lo + 1``."""
        return self.hi - self.lo + 1

    def scaled(self, granularity: Fraction) -> tuple[Fraction, Fraction]:
        """The window in the query's units, ``(g·lo, g·hi)``."""
        return granularity * self.lo, granularity * self.hi

    def params(self, granularity: Fraction | None = None) -> list[str]:
        """``[lo, hi]`` as exact strings (:func:`odp.readable.decimal_text`), in the query's
        units if ``granularity`` is given."""
        if granularity is None:
            return [str(self.lo), str(self.hi)]
        return [decimal_text(v) for v in self.scaled(granularity)]


def noise_margin(scale: Fraction | int) -> int:
    """``K = ⌈TAIL_SCALES·s⌉`` for noise of scale ``s`` grid units (``s ≥ 0``)."""
    return math.ceil(TAIL_SCALES * Fraction(scale))


def default_grid_window(units: int, scale: Fraction | int) -> Window:
    """``[−N, N]`` with ``N = 2¹²⁸·m + ⌈128·s⌉`` for a grid mechanism of integer sensitivity
    ``m = ⌈Δ/g⌉`` and noise scale ``s`` grid units.

    It covers every query value ``|f(x)| ≤ 2¹²⁸·Δ``: then ``|f(x)/g| ≤ 2¹²⁸·m``, and
    ``n(x) = ⌊f(x)/g + 1/2⌋`` is an integer within 1/2 of it, so ``|n(x)| ≤ 2¹²⁸·m``; clamping
    then changes the release only if ``|Z| > 128·s`` (module docstring)."""
    n = COVERED_SENSITIVITIES * units + noise_margin(scale)
    return Window(-n, n)


def user_window(window: Any, granularity: Fraction, *, what: str = "window") -> Window:
    """A user's ``window=(lo, hi)`` in the query's units, snapped outward to the grid ``g·ℤ``:
    ``[⌊lo/g⌋, ⌈hi/g⌉]`` grid units.  Refused (:class:`InvalidParameter`): anything but a pair
    of finite numbers, and ``lo ≥ hi`` (an empty window, or one point: a constant release)."""
    try:
        lo_raw, hi_raw = window
    except (TypeError, ValueError):
        raise InvalidParameter(f"{what} must be a pair (lo, hi) of numbers in the query's "
                               f"units, got {window!r}") from None
    try:
        lo = to_fraction(lo_raw, name=f"{what}'s lower end", warn=False)
        hi = to_fraction(hi_raw, name=f"{what}'s upper end", warn=False)
    except InvalidParameter as exc:  # an InvalidBudget: this is not a budget
        raise InvalidParameter(str(exc)) from None
    if not lo < hi:
        raise InvalidParameter(
            f"{what}=({lo_raw!r}, {hi_raw!r}) is {'empty' if lo > hi else 'a single point'}: "
            "a window needs lo < hi (its ends are snapped outward to the grid)")
    return Window(math.floor(lo / granularity), math.ceil(hi / granularity))


def laplace_clamp_bound(scale: Fraction, margin: int) -> Fraction:
    """A rigorous rational upper bound of ``P(|Z| > margin)`` for the discrete Laplace of scale
    ``s`` (``P(z) ∝ e^{−|z|/s}``): ``2·r^k/(1 + r) ≤ 2·e^{−k/s}`` with ``k = margin + 1``."""
    return 2 * exp_bracket(-Fraction(margin + 1) / Fraction(scale))[1]


def sigma_upper(sigma2: Fraction) -> int:
    """An integer ``≥ σ = √σ²`` (``⌊√⌈σ²⌉⌋ + 1``)."""
    return math.isqrt(math.ceil(sigma2)) + 1


def gaussian_clamp_bound(sigma2: Fraction, margin: int) -> Fraction:
    """A rigorous rational upper bound of ``P(|Z| > margin)`` for the discrete Gaussian of
    variance parameter σ² (module docstring): ``2·e^{−k²/(2σ²)}·(1 + σ²/k)``, ``k = margin + 1``."""
    k = margin + 1
    sigma2 = Fraction(sigma2)
    return 2 * exp_bracket(-Fraction(k * k) / (2 * sigma2))[1] * (1 + sigma2 / k)


def clamped_laplace_law(center: int, r: Any, window: Window,
                        view: tuple[int, int] | None = None) -> dict[Hashable, Any]:
    """The exact law of ``clamp(center + Z, lo, hi)`` for the discrete Laplace
    ``P(Z = z) = (1 − r)/(1 + r)·r^{|z|}`` (``r = e^{−1/s}``; any number type, exact
    Fractions for a rational ``r``).

    The window's ends carry the tails: ``P(lo) = P(Z ≤ lo − center) = P(Z ≥ center − lo)`` and
    ``P(hi) = P(Z ≥ hi − center)`` (:func:`odp.samplers.discrete_laplace_tail`).  With
    ``view = (a, b)`` (``lo ≤ a ≤ b ≤ hi``) only the outputs in ``[a, b]`` are listed, and the
    rest are lumped into ``"<"`` (outputs below ``a``) and ``">"`` (above ``b``) when possible."""
    a, b = (window.lo, window.hi) if view is None else view
    if not window.lo <= a <= b <= window.hi:
        raise InvalidParameter(f"the view [{a}, {b}] must lie in the window "
                               f"[{window.lo}, {window.hi}]")
    c = (1 - r) / (1 + r)
    out: dict[Hashable, Any] = {}
    for y in range(a, b + 1):
        if y == window.lo:
            out[y] = discrete_laplace_tail(center - window.lo, r)
        elif y == window.hi:
            out[y] = discrete_laplace_tail(window.hi - center, r)
        else:
            out[y] = c * r ** abs(y - center)
    if a > window.lo:  # clamp(center + Z) < a  ⟺  center + Z ≤ a − 1
        out["<"] = discrete_laplace_tail(center - a + 1, r)
    if b < window.hi:  # clamp(center + Z) > b  ⟺  center + Z ≥ b + 1
        out[">"] = discrete_laplace_tail(b + 1 - center, r)
    return out
