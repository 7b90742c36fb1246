"""Composition of bucketed pairs: FFT convolution, and r-fold composition by repeated squaring.

For independent pairs, privacy losses add, so the buckets of the product pair are the
convolution of the buckets (Meiser & Mohammadi, §3–4): index ``i`` of the product holds the
events ``(x1, x2)`` with ``i1 + i2 = i``.  All three vectors of a :class:`BucketState`
(upper A-masses, lower A-masses, lower scaled B-masses -- the scaling ``exp(i*h)`` is multiplicative,
so it commutes with convolution) are convolved with one real FFT each.  The infinity / distinguishing
masses combine by inclusion–exclusion.  ``r``-fold composition uses binary exponentiation:
``⌊log2 r⌋`` squarings and ``popcount(r) - 1`` products; after each step the result is fitted
back into the bucket window, squaring the factor when the range would overflow
(:func:`odp.buckets.state.fit`).

**FFT round-off.**  A convolution through the FFT has an error that is *absolute* (relative to
the largest entries), so tiny tail entries can be wrong in either direction.  We bound it with the
standard error analysis of Cooley–Tukey FFTs (Higham, *Accuracy and Stability of Numerical
Algorithms*, 2nd ed., Thm 24.2): for ``z = x * y`` computed with transforms of length ``L``,
``||z_computed - z||_2 <= c · u · (log2 L + 2) · (||x||_2 ||y||_1 + ||x||_1 ||y||_2)`` with
``c = FFT_ERROR_CONSTANT`` (we use twice the constant of the theorem, which assumes twiddle
factors accurate to about ``u``), hence ``||·||_1 <= sqrt(L) ||·||_2``.  That bound is carried in
the state's ``abs_*`` fields and added to / subtracted from the final bounds, so round-off cannot
push an upper bound below the truth (tested at δ = 1e-10).  Negative FFT outputs are clipped to
0, which only moves entries toward their (non-negative) exact values.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import scipy.fft as sfft

from ._numerics import U
from .state import BucketState, _lower_in_range, coarsen, fit, refine, renormalize

#: ``c`` in the FFT error bound above (Higham's Thm 24.2 gives about 2 × 6.7 for a complex
#: radix-2 FFT with accurate twiddles; real transforms add a few ulps; we use 32).
FFT_ERROR_CONSTANT = 32.0


#: Unit roundoff of the extended type used for the most error-sensitive convolutions
#: (x87 80-bit ``long double`` where available: 2**-64; plain double elsewhere).
U_EXTENDED = float(np.finfo(np.longdouble).eps) / 2

#: Errors made while composing a state of ``c`` copies are amplified about ``total / c`` times by
#: the remaining compositions; such steps use extended precision when that factor is at least
#: this (the later, cheaper double-precision steps then dominate the total error).
EXTENDED_PRECISION_FACTOR = 8


def fft_error_l2(x: np.ndarray, y: np.ndarray, length: int, unit: float = U) -> float:
    """Bound on the ℓ2 norm of the round-off error of ``x * y`` computed via FFTs of ``length``
    in a floating-point type with unit roundoff ``unit``."""
    n2x, n1x = math.sqrt(float((x * x).sum())), float(np.abs(x).sum())
    n2y, n1y = math.sqrt(float((y * y).sum())), float(np.abs(y).sum())
    return FFT_ERROR_CONSTANT * unit * (math.log2(length) + 2) * (n2x * n1y + n1x * n2y) * (1 + 1e-6)


def convolve(
    xs: np.ndarray, ys: np.ndarray | None, extended: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Full linear convolutions of the rows of ``xs`` with the rows of ``ys`` (``None``: square).

    Returns the results (float64, negatives clipped to 0) and, per row, a bound on the ℓ1 norm
    of the round-off error of the FFT (the final rounding to float64 is a relative error of one
    unit, which callers add to their relative bounds).
    """
    nx = xs.shape[1]
    ny = nx if ys is None else ys.shape[1]
    n_out = nx + ny - 1
    length = sfft.next_fast_len(n_out, real=True)
    dtype = np.longdouble if extended else np.float64
    unit = U_EXTENDED if extended else U
    fx = sfft.rfft(xs.astype(dtype, copy=False), length, axis=1)
    if ys is None:
        prod = fx * fx
        ys_ = xs
    else:
        prod = fx * sfft.rfft(ys.astype(dtype, copy=False), length, axis=1)
        ys_ = ys
    out = np.asarray(sfft.irfft(prod, length, axis=1)[:, :n_out], dtype=np.float64)
    np.maximum(out, 0.0, out=out)
    errs = np.array(
        [fft_error_l2(xs[k], ys_[k], length, unit) * math.sqrt(n_out) for k in range(xs.shape[0])]
    )
    return out, errs


def _compose_errors(*, rx, ex, nx, ry, ey, ny, fft_l1):
    """Propagate (relative, absolute-ℓ1) error bounds through a bilinear non-negative product.

    ``nx``/``ny`` are the ℓ1 norms of the *computed* operands.  Once a relative bound reaches 1
    the bounds carry no information: they become ``inf`` and the read-off reports the trivial
    interval (see ``readoff._usable``).
    """
    if not (rx < 1 and ry < 1 and math.isfinite(ex) and math.isfinite(ey)):
        return math.inf, math.inf
    rel = (1 + rx) * (1 + ry) - 1 + 5 * U
    true_nx = (nx + ex) / max(1e-300, 1 - rx)
    absolute = ex * ny + (1 + rx) * true_nx * ey + fft_l1
    return rel, absolute * (1 + 4 * U)


def _inf_error(x: BucketState, y: BucketState, sx: float, a_inf: float) -> float:
    """Bound on ``|a_inf - exact|`` for ``a_inf = x.a_inf + S y.a_inf`` (``S`` the computed sum
    of ``x.pa``; the exact one is ``x.a_inf* + S* y.a_inf*``): ``x.err_inf + S* y.err_inf +
    y.a_inf |S - S*|`` plus rounding, with ``|S - S*| <= rel S* + abs + (sum rounding) S``."""
    if not (x.rel_up < 1 and math.isfinite(x.abs_up)):
        return math.inf
    s_up = (sx + x.abs_up) / (1.0 - x.rel_up) * (1 + 4 * U)
    sum_err = x.rel_up * s_up + x.abs_up + (math.log2(max(x.size, 2)) + 2) * U * sx
    err = x.err_inf + s_up * y.err_inf + y.a_inf * sum_err + 3 * U * a_inf
    return err * (1 + 4 * U)


def compose(
    x: BucketState,
    y: BucketState | None,
    *,
    buckets: int,
    tail: float,
    rounding: str = "split",
    extended: bool = False,
) -> BucketState:
    """The product of two pairs (``y=None``: of ``x`` with itself), fitted into ``buckets``.

    ``extended`` runs the FFTs in extended precision (slower, ~2000× smaller round-off).
    """
    if y is not None:
        x, y = align(x, y, rounding, buckets=buckets)
        y = _lower_in_range(y)
    x = _lower_in_range(x)
    ys = None if y is None else np.stack([y.pa, y.ma, y.bh])
    yy = x if y is None else y
    out, fft_l1 = convolve(np.stack([x.pa, x.ma, x.bh]), ys, extended)
    pa, ma, bh = out
    sx_pa, sy_pa = float(x.pa.sum()), float(yy.pa.sum())
    sx_ma, sy_ma = float(x.ma.sum()), float(yy.ma.sum())
    a_inf = x.a_inf + sx_pa * yy.a_inf
    err_inf = _inf_error(x, yy, sx_pa, a_inf)
    d = x.d * (sy_ma + yy.d) + sx_ma * yy.d
    rel_up, abs_up = _compose_errors(
        rx=x.rel_up, ex=x.abs_up, nx=sx_pa + x.a_inf, ry=yy.rel_up, ey=yy.abs_up, ny=sy_pa + yy.a_inf, fft_l1=fft_l1[0]
    )
    rel_ma, abs_ma = _compose_errors(
        rx=x.rel_ma, ex=x.abs_ma, nx=sx_ma + x.d, ry=yy.rel_ma, ey=yy.abs_ma, ny=sy_ma + yy.d, fft_l1=fft_l1[1]
    )
    rel_bh, abs_bh = _compose_errors(
        rx=x.rel_bh, ex=x.abs_bh, nx=float(x.bh.sum()), ry=yy.rel_bh, ey=yy.abs_bh, ny=float(yy.bh.sum()), fft_l1=fft_l1[2]
    )
    # entries below this level are indistinguishable from round-off when choosing the window
    noise = 1e-3 * max(fft_l1[0], fft_l1[1]) / math.sqrt(pa.size)
    state = BucketState(
        h=x.h,
        start=x.start + yy.start,
        pa=pa,
        a_inf=a_inf,
        ma=ma,
        bh=bh,
        d=d,
        rel_up=rel_up,
        abs_up=abs_up,
        rel_ma=rel_ma,
        abs_ma=abs_ma,
        rel_bh=rel_bh,
        abs_bh=abs_bh,
        count=x.count + yy.count,
        coarsenings=max(x.coarsenings, yy.coarsenings),
        truncated=x.truncated + yy.truncated,
        dropped=x.dropped + yy.dropped,
        bshift=x.bshift + yy.bshift,
        err_inf=err_inf,
    )
    return renormalize(fit(state, buckets=buckets, tail=tail, noise=noise, rounding=rounding))


def align(
    x: BucketState, y: BucketState, rounding: str = "split", *, buckets: int | None = None
) -> tuple[BucketState, BucketState]:
    """Bring two states to the same grid step: the coarser one is refined (exactly,
    :func:`odp.buckets.state.refine`) while its refined window still fits ``buckets``, and only
    then is the finer one coarsened (which loses accuracy).  So a lattice mechanism composed on
    its own coarse lattice (e.g. randomized response, h = ε) no longer drags a Gaussian composed
    beside it onto that lattice.  ``buckets=None``: coarsen only."""
    ratio = y.h / x.h
    p = round(math.log2(ratio))
    if 2.0**p != ratio:
        raise ValueError(f"grids {x.h!r} and {y.h!r} are not a power of two apart")
    while x.h != y.h:
        swap = x.h > y.h
        fine, coarse = (y, x) if swap else (x, y)
        if buckets is not None and 2 * coarse.size - 1 <= buckets:
            coarse = refine(coarse)
        else:
            fine = coarsen(fine, rounding)
        x, y = (coarse, fine) if swap else (fine, coarse)
    return x, y


def needs_extended(copies: int, total: int | None) -> bool:
    """Whether a step producing ``copies`` composed pairs, in a composition of ``total``, should
    use extended-precision FFTs (see :data:`EXTENDED_PRECISION_FACTOR`)."""
    return total is not None and total >= EXTENDED_PRECISION_FACTOR * copies


def self_compose(
    x: BucketState,
    count: int,
    *,
    buckets: int,
    tail: float,
    rounding: str = "split",
    total: int | None = None,
    on_step: Callable[[], object] | None = None,
) -> BucketState:
    """``count``-fold composition of ``x`` with itself by repeated squaring.

    ``total`` is the size of the whole composition this is part of; it decides which steps run
    in extended precision (:func:`needs_extended`; ``None``: none).  ``on_step`` is called after
    each of the :func:`convolutions` ``(count)`` products (for progress bars).
    """
    if count < 1:
        raise ValueError("count must be >= 1")
    result: BucketState | None = None
    base = x
    while count:
        if count & 1:
            if result is None:
                result = base
            else:
                ext = needs_extended(result.count + base.count, total)
                result = compose(result, base, buckets=buckets, tail=tail, rounding=rounding, extended=ext)
                if on_step is not None:
                    on_step()
        count >>= 1
        if count:
            base = compose(base, None, buckets=buckets, tail=tail, rounding=rounding, extended=needs_extended(2 * base.count, total))
            if on_step is not None:
                on_step()
    assert result is not None
    return result


def convolutions(count: int) -> int:
    """Products :func:`self_compose` computes for ``count`` copies: ``⌊log2 count⌋`` squarings
    and ``popcount(count) - 1`` multiplications."""
    return max(count.bit_length() - 1, 0) + bin(count).count("1") - 1
