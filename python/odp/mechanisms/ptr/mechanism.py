"""Propose-Test-Release as mechanisms (Hartmann et al. 2022, Sec. 4.2): :class:`PTRFunction`
(Def. 9) and its fixed-proposal mechanism, the log-bin IQR PTR function and ``M_IQR``
(Lemma 10), and the ε-DP :class:`ExponentialMedian`.  See :mod:`odp.mechanisms.ptr` for the
construction and proof sketch."""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

from ...budget import parse_delta, parse_epsilon, parse_positive, parse_positive_int, to_fraction
from ...errors import InvalidParameter
from ...neighbours import Neighbours
from ...guarantees import DP, ODP
from ...rational import exp_bracket, log_bracket
from ...readable import ExactValue
from ...samplers import bernoulli_exp, discrete_laplace
from ..base import BOTTOM, Mechanism
from ..builtin import register, seal
from ..noise import exact_value, value_or_bottom
from ..public import public_size
from ..window import Window, laplace_clamp_bound, noise_margin
from ...types import Data, RandomSource, Release

__all__ = ["PTRFunction", "PTRMechanism", "IQREstimate", "LogBinIQR", "IQRMechanism",
           "ExponentialMedian", "default_base", "iqr_of", "stability", "pass_threshold",
           "MAX_PASS_THRESHOLD", "IQR_COVERED_BITS"]


class PTRFunction:
    """An (ε, δ)-PTR function ``T(x, s)`` (Def. 9 of Hartmann et al. 2022).

    Subclasses implement :meth:`apply` and must satisfy Def. 9: ``T(x, ⊥) = ⊥``; the events
    {⊥} and {≠ ⊥} are e^ε-close for neighbours; for ``s`` in a good set ``G(T, x)`` every
    release set is e^{2ε}-close; for ``s`` outside it, ``P(T(x, s) ≠ ⊥) ≤ δ``.
    Then ``T(·, s)`` is (𝒫, ℰ, δ)-ODP with ℰ(values) = 2ε and ℰ({⊥}) = ε (Sec. 4.2).

    Its output space is ⊥ and the values :meth:`apply` returns: a subclass whose values range
    over an unbounded set should clamp them to a public window after the noise (as
    :class:`LogBinIQR` does) so that Theorem 7 for finite output spaces covers it."""

    name = "ptr"

    def __init__(self, epsilon: Any, delta: Any):
        self.epsilon = parse_epsilon(epsilon)
        self.delta = parse_delta(delta)
        if self.epsilon <= 0 or self.delta <= 0:
            raise InvalidParameter("a PTR function needs epsilon > 0 and 0 < delta < 1")

    def apply(self, data: Data, proposal: Any, rng: RandomSource) -> Release:
        """``T(x, s)``: a value or :data:`BOTTOM`.  Must return ⊥ when ``proposal is BOTTOM``."""
        raise NotImplementedError

    def guarantee(self) -> ODP:
        return ODP(value_or_bottom, {"value": 2 * self.epsilon, "bottom": self.epsilon},
                   self.delta)

    def mechanism(self, proposal: Any) -> "PTRMechanism":
        """``T(·, s)`` as a mechanism for :meth:`odp.Accountant.run`."""
        return PTRMechanism(self, proposal)

    def params(self) -> dict[str, Any]:
        return {"epsilon": str(self.epsilon), "delta": str(self.delta)}


class PTRMechanism(Mechanism):
    """A PTR function with a fixed (data-independent) proposal ``s``."""

    neighbours = Neighbours.REPLACE_ONE  #: what its guarantee is stated for (odp.neighbours)

    def __init__(self, function: PTRFunction, proposal: Any):
        self.function = function
        self.proposal = proposal
        self.name = function.name
        self._guarantee = function.guarantee()
        seal(self, PTRMechanism)

    @property
    def guarantee(self) -> ODP:
        return self._guarantee

    def params(self) -> dict[str, Any]:
        return {**self.function.params(), "proposal": repr(self.proposal)}

    def release(self, data: Data, rng: RandomSource) -> Release:
        if self.proposal is BOTTOM:
            return BOTTOM
        return self.function.apply(data, self.proposal, rng)


# --------------------------------------------------------------------------------------------
# Logarithmic bins: exact arithmetic on rational values
# --------------------------------------------------------------------------------------------


def default_base(n: int) -> Fraction:
    """Dwork and Lei's bin ratio ``1 + 1/ln n``, made rational: ``1 + 1/⌈ln n⌉`` (n public)."""
    if n < 2:
        raise InvalidParameter("need n >= 2")
    return 1 + Fraction(1, max(1, math.ceil(math.log(n))))


def _log_estimate(v: Fraction, base: Fraction) -> float:
    return ((math.log(v.numerator) - math.log(v.denominator))
            / (math.log(base.numerator) - math.log(base.denominator)))


def _floor_power(v: Fraction, base: Fraction, *, a: int, c: int, e: int) -> int:
    """The largest integer j with ``b^{a·j + c} ≤ v^e`` (exact), for ``v > 0``, ``a, e ≥ 1``."""
    ve = v**e
    j = math.floor((e * _log_estimate(v, base) - c) / a)
    while base ** (a * j + c) > ve:
        j -= 1
    while base ** (a * (j + 1) + c) <= ve:
        j += 1
    return j


@dataclass(frozen=True)
class _Grid:
    """Logarithmic bins ``B_k = [b^{k+o}, b^{k+1+o})`` with offset ``o = p/q`` and ``L``
    sub-bins per bin; every comparison is between exact rational powers."""

    base: Fraction
    offset: Fraction
    resolution: int

    def bin_index(self, v: Fraction) -> int:
        """k with ``b^{k+o} ≤ v < b^{k+1+o}``, i.e. the largest k with ``b^{kq+p} ≤ v^q``."""
        q, p = self.offset.denominator, self.offset.numerator
        return _floor_power(v, self.base, a=q, c=p, e=q)

    def sub_index(self, v: Fraction) -> int:
        """``j = ⌊L·(log_b v − o)⌋``: the largest j with ``b^{jq + pL} ≤ v^{Lq}``."""
        q, p, L = self.offset.denominator, self.offset.numerator, self.resolution
        return _floor_power(v, self.base, a=q, c=p * L, e=L * q)

    def in_bin(self, v: Fraction | None, k: int) -> bool:
        """Is v (None = ±∞) in ``[b^{k+o}, b^{k+1+o})``?"""
        if v is None or v <= 0:
            return False
        q, p = self.offset.denominator, self.offset.numerator
        vq = v**q
        return self.base ** (k * q + p) <= vq < self.base ** ((k + 1) * q + p)

    def value(self, index: int) -> float:
        """Geometric midpoint of sub-bin ``index``: ``b^{(index + 1/2)/L + o}`` (``inf`` beyond
        the float range)."""
        try:
            exponent = (index + 0.5) / self.resolution + float(self.offset)
            return float(float(self.base) ** exponent)
        except OverflowError:  # an index far out (e.g. at the edge of the default window)
            return math.inf if index > 0 else 0.0


def _sorted_values(data: Sequence[Any]) -> list[Fraction]:
    return sorted(exact_value(v, name="data value") for v in data)


def _quartile_ranks(n: int) -> tuple[int, int]:
    return -(-n // 4), -(-3 * n // 4)


def _order(xs: list[Fraction], i: int) -> Fraction | None:
    """x_(i), 1-based; None stands for −∞ (i < 1) or +∞ (i > n)."""
    return xs[i - 1] if 1 <= i <= len(xs) else None


def iqr_of(data: Sequence[Any]) -> Fraction:
    """The empirical IQR ``x_(⌈3n/4⌉) − x_(⌈n/4⌉)`` (exact)."""
    xs = _sorted_values(data)
    lo, hi = _quartile_ranks(len(xs))
    return xs[hi - 1] - xs[lo - 1]


def stability(xs: list[Fraction], grid: _Grid) -> int:
    """The test statistic A(x) of the module docstring (1-Lipschitz under replace-one)."""
    n = len(xs)
    lo, hi = _quartile_ranks(n)
    iqr = xs[hi - 1] - xs[lo - 1]
    if iqr <= 0:
        return 1
    k = grid.bin_index(iqr)

    def contained(t: int) -> bool:
        a, b = _order(xs, hi - t), _order(xs, lo + t)
        lower = None if a is None or b is None else max(Fraction(0), a - b)
        c, d = _order(xs, hi + t), _order(xs, lo - t)
        upper = None if c is None or d is None else c - d
        return grid.in_bin(lower, k) and grid.in_bin(upper, k)

    # I(t) grows with t: binary search for the first t >= 1 with I(t) ⊄ bin
    if not contained(1):
        return 1
    good, bad = 1, n + 1  # contained(n + 1) is False (both ends infinite)
    while bad - good > 1:
        mid = (good + bad) // 2
        if contained(mid):
            good = mid
        else:
            bad = mid
    return bad


#: Largest PTR threshold K accepted (K ≈ ln(1/δ)/ε): beyond it the test never passes in practice.
MAX_PASS_THRESHOLD = 10**6


def pass_threshold(r_upper: Any, delta: Any) -> int:
    """The least integer ``K ≥ 1`` with ``r^K/(1+r) ≤ δ`` for the discrete Laplace parameter
    ``r`` (pass an upper bound of r: the left side increases with r).

    Decided in the log domain with rational brackets of ``ln r``, ``ln δ`` and ``ln(1+r)``
    (``K·ln r ≤ ln δ + ln(1+r)``); only when a bracket cannot decide is ``r^K`` computed
    exactly.  Cost O(1) big-number operations instead of K exact multiplications (which took a
    minute at ε = 10⁻³)."""
    r, d = Fraction(r_upper), Fraction(delta)
    if r / (1 + r) <= d:
        return 1
    lr_lo, lr_hi = log_bracket(r)  # ln r < 0
    ld_lo, ld_hi = log_bracket(d)
    l1_lo, l1_hi = log_bracket(1 + r)
    low, high = ld_lo + l1_lo, ld_hi + l1_hi  # bracket of ln δ + ln(1+r)

    def ok(k: int) -> bool:
        if k * lr_hi <= low:
            return True
        if k * lr_lo > high:
            return False
        return r ** k / (1 + r) <= d  # pragma: no cover - the brackets are 30 digits wide

    estimate = (math.ceil((low + high) / (lr_lo + lr_hi)) if lr_hi < 0
                else MAX_PASS_THRESHOLD + 1)  # r indistinguishable from 1: ε is negligible
    if estimate > MAX_PASS_THRESHOLD:
        raise InvalidParameter(
            "delta too small for this epsilon: the PTR test threshold would be "
            + (f"about {estimate}" if lr_hi < 0 else "astronomically large")
            + f", above the limit {MAX_PASS_THRESHOLD} (raise epsilon or delta)")
    k = max(1, estimate)
    while k > 1 and ok(k - 1):
        k -= 1
    while not ok(k):
        k += 1
        if k > MAX_PASS_THRESHOLD:  # pragma: no cover - the estimate is within a few units
            raise InvalidParameter(f"delta too small for this epsilon (K > {MAX_PASS_THRESHOLD})")
    return k


@dataclass(frozen=True)
class IQREstimate:
    """A released IQR: sub-bin ``index`` of discretisation ``discretisation`` (1 or 2).  Its
    value is ``b^{(index + 1/2)/L + o}`` (geometric midpoint of the sub-bin); ``index=None``
    stands for an IQR of 0."""

    discretisation: int
    index: int | None
    base: Fraction
    resolution: int
    offset: Fraction

    @property
    def value(self) -> float:
        if self.index is None:
            return 0.0
        return _Grid(self.base, self.offset, self.resolution).value(self.index)

    def __float__(self) -> float:
        return self.value

    def to_json(self) -> dict[str, Any]:
        return {"discretisation": self.discretisation, "index": self.index,
                "base": str(self.base), "resolution": self.resolution,
                "offset": str(self.offset), "value": self.value}


#: The default index window of :class:`LogBinIQR` covers every IQR in ``[2⁻ᴮ, 2ᴮ]``, B = this
#: (every IQR of float64 data: the smallest positive difference of floats is 2⁻¹⁰⁷⁴).
IQR_COVERED_BITS = 1100

#: ``6932/10000 ≥ ln 2``, for a rational bound of ``log_b 2 = ln 2/ln b ≤ ln 2·b/(b − 1)``.
_LN2_UPPER = Fraction(6932, 10000)

_OFFSETS = (Fraction(0), Fraction(1, 2))


class LogBinIQR(PTRFunction):
    """One discretisation of Dwork and Lei's IQR estimator as an (ε, δ)-PTR function; the
    proposal ``s`` is the bin offset (0 or 1/2).  See the module docstring.

    **Finite output space.**  The released sub-bin index ``ĵ = j + W`` is clamped to a declared
    index window (after the noise, with a public window: post-processing, so Def. 9 still
    holds): the outputs are ⊥ and IQREstimate objects with index ``None`` (IQR 0) or in the
    window.  Default window ``[−N, N]``, ``N = J + ⌈128·(L−1)/ε⌉`` with
    ``J = ⌈L·B·(6932/10000)·b/(b − 1)⌉ + L + 1`` (B = :data:`IQR_COVERED_BITS` = 1100): as
    ``log_b 2 = ln 2/ln b ≤ ln 2·b/(b − 1)``, every IQR in ``[2⁻¹¹⁰⁰, 2¹¹⁰⁰]`` has ``|j| ≤ J``,
    and then clamping changes the release only if ``|W| > 128·(L−1)/ε``: probability
    ``≤ 2e^{−128} < 2⁻¹⁸³`` (:meth:`clamp_bound`; with L = 1 there is no noise and no change).
    ``window=(lo, hi)`` (IQR values, ``0 < lo < hi``) declares another window: in each
    discretisation, the indices from the sub-bin holding ``lo`` to the one holding ``hi``
    (snapped outward; at least two indices)."""

    name = "ptr_iqr"

    def __init__(self, epsilon: Any, delta: Any, *, base: Any, resolution: int = 4,
                 window: Any = None):
        super().__init__(epsilon, delta)
        self.base = to_fraction(base, name="base")
        if self.base <= 1:
            raise InvalidParameter(f"base must be > 1, got {base!r}")
        self.resolution = parse_positive_int(resolution, name="resolution")
        #: P(pass | A = 1) = r^K/(1+r) ≤ δ with r = e^{−ε} (upper bracket): pass iff A + Z ≥ K+1
        self.threshold = pass_threshold(exp_bracket(-self.epsilon)[1], self.delta)
        self.test_scale = 1 / self.epsilon
        self.release_scale = ((Fraction(self.resolution - 1) / self.epsilon)
                              if self.resolution > 1 else None)
        #: the user's window of IQR values, or None for the default index window
        self.window = None if window is None else self._value_window(window)
        #: the declared index window of each discretisation, by bin offset (0 and 1/2)
        self.index_windows = {o: self._index_window(o) for o in _OFFSETS}
        seal(self, LogBinIQR)

    @staticmethod
    def _value_window(window: Any) -> tuple[Fraction, Fraction]:
        try:
            lo_raw, hi_raw = window
        except (TypeError, ValueError):
            raise InvalidParameter(f"the IQR window must be a pair (lo, hi) of IQR values, "
                                   f"got {window!r}") from None
        try:
            lo = to_fraction(lo_raw, name="the IQR window's lower end", warn=False)
            hi = to_fraction(hi_raw, name="the IQR window's upper end", warn=False)
        except InvalidParameter as exc:  # an InvalidBudget: this is not a budget
            raise InvalidParameter(str(exc)) from None
        if not 0 < lo < hi:
            raise InvalidParameter(f"the IQR window needs 0 < lo < hi, got {window!r}")
        return lo, hi

    def covered_index(self) -> int:
        """``J``: every IQR in ``[2⁻¹¹⁰⁰, 2¹¹⁰⁰]`` has a sub-bin index ``|j| ≤ J`` in both
        discretisations (class docstring)."""
        L = self.resolution
        log_b_2 = _LN2_UPPER * self.base / (self.base - 1)  # ≥ ln 2/ln b, as ln b ≥ 1 − 1/b
        return math.ceil(L * IQR_COVERED_BITS * log_b_2) + L + 1

    def _index_window(self, offset: Fraction) -> Window:
        if self.window is not None:
            grid = self.grid(offset)
            lo, hi = grid.sub_index(self.window[0]), grid.sub_index(self.window[1])
            return Window(lo, max(hi, lo + 1))
        margin = 0 if self.release_scale is None else noise_margin(self.release_scale)
        n = self.covered_index() + margin
        return Window(-n, n)

    def index_window(self, offset: Any) -> Window:
        """The declared index window of the discretisation with bin offset ``offset``."""
        return self.index_windows[self.grid(offset).offset]

    def clamp_bound(self) -> Fraction:
        """A rigorous upper bound of P(clamping changes the release) for every IQR in
        ``[2⁻¹¹⁰⁰, 2¹¹⁰⁰]`` with the default window
        (:func:`odp.mechanisms.window.laplace_clamp_bound` of the release noise; 0 if L = 1)."""
        if self.release_scale is None:
            return Fraction(0)
        return laplace_clamp_bound(self.release_scale, noise_margin(self.release_scale))

    def grid(self, offset: Fraction) -> _Grid:
        offset = Fraction(offset)
        if offset not in (0, Fraction(1, 2)):
            raise InvalidParameter("the bin offset (proposal) must be 0 or 1/2")
        return _Grid(self.base, offset, self.resolution)

    def params(self) -> dict[str, Any]:
        out = {**super().params(), "base": str(self.base), "resolution": self.resolution,
               "index_windows": [self.index_windows[o].params() for o in _OFFSETS]}
        if self.window is not None:
            out["window"] = [str(v) for v in self.window]
        return out

    def apply(self, data: Any, proposal: Any, rng: RandomSource,
              discretisation: int = 1) -> Release:
        if proposal is BOTTOM:
            return BOTTOM
        grid = self.grid(proposal)
        xs = _sorted_values(data)
        if len(xs) < 2:
            raise InvalidParameter("the IQR needs at least 2 records")
        a = stability(xs, grid)
        if a + discrete_laplace(self.test_scale, rng) < self.threshold + 1:
            return BOTTOM
        lo, hi = _quartile_ranks(len(xs))
        iqr = xs[hi - 1] - xs[lo - 1]
        if iqr == 0:  # A = 1 here (a bad proposal): passing has probability ≤ δ
            return IQREstimate(discretisation, None, self.base, self.resolution, grid.offset)
        j = grid.sub_index(iqr)
        if self.release_scale is not None:
            j += discrete_laplace(self.release_scale, rng)
        j = self.index_windows[grid.offset].clamp(j)  # after the noise: post-processing
        return IQREstimate(discretisation, j, self.base, self.resolution, grid.offset)


class IQRMechanism(Mechanism):
    """Dwork and Lei's ``M_IQR`` (ε, δ): the IQR PTR function on bins with offset 0, and if it
    returns ⊥, on bins shifted by half a bin.  Declared guarantee (Lemma 10):
    (𝒫, ℰ, δ)-ODP with ℰ(values) = 3ε, ℰ({⊥}) = 2ε.  ``n`` is the public database size.

    Output space (finite): ⊥, or an :class:`IQREstimate` of discretisation 1 or 2 whose index
    is ``None`` (IQR 0) or lies in that discretisation's declared index window; see
    :class:`LogBinIQR` for the default window (for every IQR in ``[2⁻¹¹⁰⁰, 2¹¹⁰⁰]``, clamping
    changes the release with probability below ``2⁻¹⁸³``) and for ``window=(lo, hi)``."""

    neighbours = Neighbours.REPLACE_ONE  #: what its guarantee is stated for (odp.neighbours)

    name = "iqr"

    def __init__(self, *, epsilon: Any, delta: Any, n: int | None = None, base: Any = None,
                 resolution: int = 4, window: Any = None):
        self.n = None if n is None else parse_positive_int(n, name="n (the public database size)")
        if base is None:
            if self.n is None:
                raise InvalidParameter("give the public database size n or the bin base")
            base = default_base(self.n)
        self.epsilon = parse_epsilon(epsilon)
        self.delta = parse_delta(delta)
        self.function = LogBinIQR(self.epsilon, self.delta / 2, base=base, resolution=resolution,
                                  window=window)
        self._guarantee = ODP(value_or_bottom,
                              {"value": 3 * self.epsilon, "bottom": 2 * self.epsilon},
                              self.delta)
        seal(self, IQRMechanism)

    @property
    def guarantee(self) -> ODP:
        return self._guarantee

    def params(self) -> dict[str, Any]:
        fn = self.function.params()
        out: dict[str, Any] = {"epsilon": str(self.epsilon), "delta": str(self.delta)}
        out.update((k, fn[k]) for k in ("base", "resolution", "index_windows", "window")
                   if k in fn)
        if self.n is not None:
            out["n"] = self.n
        return out

    def check_public(self, data: Any) -> None:
        """The database size is public (replace-one neighbours): it must be the declared ``n``
        and at least 2.  Checked before the round is reserved; nothing is charged."""
        size = public_size(data, what="the M_IQR database")
        if self.n is not None and size != self.n:
            raise InvalidParameter(f"M_IQR was declared for n={self.n} records, got {size}; "
                                   "nothing was reserved or charged")
        if size < 2:
            raise InvalidParameter(f"the IQR needs at least 2 records, got {size}")

    def release(self, data: Data, rng: RandomSource) -> Release:
        # second line of defence (release called directly, without an accountant)
        if self.n is not None and len(data) != self.n:
            raise InvalidParameter(f"M_IQR was declared for n={self.n} records, got {len(data)}")
        first = self.function.apply(data, Fraction(0), rng, discretisation=1)
        if first is not BOTTOM:
            return first
        return self.function.apply(data, Fraction(1, 2), rng, discretisation=2)


class ExponentialMedian(Mechanism):
    """ε-DP median by the exponential mechanism (McSherry–Talwar 2007) on ``candidates``
    equally spaced points of the public interval ``[lower, upper]``: ``P(y) ∝ exp(ε·u(y)/2)``
    with ``u(y) = −max(#{x_i < y}, #{x_i > y})`` (sensitivity 1 for replace-one and for
    add/remove neighbours).  Sampled exactly by rejection: a uniform candidate is kept with
    probability ``exp(−ε(u_max − u(y))/2)`` (exact Bernoulli(exp(−γ))).

    Output space: the ``candidates`` grid points — finite by construction, no clamp needed.  A
    release is an :class:`odp.readable.ExactValue` (the exact grid point, printed as a decimal
    when it is one)."""

    neighbours = Neighbours.REPLACE_ONE  #: what its guarantee is stated for (odp.neighbours)

    name = "median"

    def __init__(self, *, epsilon: Any, lower: Any, upper: Any, candidates: int = 1001):
        self.epsilon = parse_positive(epsilon, name="epsilon")
        self.lower = to_fraction(lower, name="lower")
        self.upper = to_fraction(upper, name="upper")
        if not self.lower < self.upper:
            raise InvalidParameter(f"the median's public interval needs lower < upper, got "
                                   f"lower={lower!r}, upper={upper!r}")
        self.candidates = parse_positive_int(candidates, name="candidates")
        if self.candidates < 2:
            raise InvalidParameter(f"candidates must be an integer >= 2, got {candidates!r}")
        self._guarantee = DP(self.epsilon)
        seal(self, ExponentialMedian)

    @property
    def guarantee(self) -> DP:
        return self._guarantee

    def params(self) -> dict[str, Any]:
        return {"epsilon": str(self.epsilon), "lower": str(self.lower),
                "upper": str(self.upper), "candidates": self.candidates}

    def grid(self) -> list[Fraction]:
        step = (self.upper - self.lower) / (self.candidates - 1)
        return [self.lower + i * step for i in range(self.candidates)]

    def utilities(self, data: Sequence[Any]) -> list[int]:
        xs = _sorted_values(data)
        out = []
        for y in self.grid():
            below = bisect.bisect_left(xs, y)
            above = len(xs) - bisect.bisect_right(xs, y)
            out.append(-max(below, above))
        return out

    def release(self, data: Any, rng: RandomSource) -> ExactValue:
        us = self.utilities(data)
        best = max(us)
        grid = self.grid()
        while True:
            i = rng.randbelow(self.candidates)
            if bernoulli_exp(self.epsilon * (best - us[i]) / 2, rng):
                return ExactValue(grid[i])


# odp's own mechanisms (odp.mechanisms.builtin).  A PTRMechanism is built-in only around odp's
# log-bin IQR PTR function: a user's PTRFunction is its own Definition 9 claim (declared).
register(LogBinIQR, None)
register(PTRMechanism, "ptr_iqr", parts={"function": LogBinIQR})
register(IQRMechanism, "iqr", parts={"function": LogBinIQR})
register(ExponentialMedian, "median")
