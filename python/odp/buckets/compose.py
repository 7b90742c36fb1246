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
import threading
from typing import Callable

import numpy as np
import scipy.fft as sfft

from ._numerics import U
from .state import (BucketState, _lower_in_range, coarsen, fit, refine, renormalize,
                    tilt_weights, weight_error)

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


#: Entries below this are set to 0 before and after a tilted convolution (subnormal floats make
#: FFTs and sums many times slower); each such change is an absolute error below ``FLUSH``,
#: counted in the bounds.
FLUSH = 1e-290


#: The largest tilted mass a tilted convolution accepts (sums of products of two stay finite).
MAX_TILTED = 1e150

class _PerThread(threading.local):
    """Per-thread caches of :func:`convolve_tilted` (its buffers are written in place, so two
    threads must never share them)."""

    def __init__(self) -> None:
        #: the transform of the last operand (one entry ``"last"``, see ``spectrum``)
        self.spectrum: dict = {}
        #: work buffers for the last shape used (one entry ``"buffers"``)
        self.work: dict = {}


_LOCAL = _PerThread()

#: Work buffers of :func:`convolve_tilted` are kept for the next call of the same shape: fresh
#: arrays of this size are mapped page by page by the system on first touch (hundreds of page
#: faults per transform, measured to triple the time of an FFT of 6 rows of 13,824); reused
#: buffers are not.  Buffers above :data:`WORKSPACE_BYTES` in all are not kept.
WORKSPACE_BYTES = 2**26


def _workspace(rows: int, length: int):
    """``(real input, [3 spectra], product, real output)`` buffers for ``rows`` rows of
    ``length`` (contiguous views of flat buffers kept for later calls, grown as needed);
    ``None`` above the size limit."""
    half = length // 2 + 1
    need_r, need_c = rows * length, rows * half
    if (2 * need_r + 5 * 2 * need_c) * 8 > WORKSPACE_BYTES:
        return None
    work = _LOCAL.work
    flat = work.get("buffers")
    if flat is None or flat[0].size < need_r or flat[2].size < need_c:
        cap_r, cap_c = need_r + need_r // 2, need_c + need_c // 2
        flat = (np.empty(cap_r), np.empty(cap_r), np.empty(cap_c, complex),
                np.empty(cap_c, complex), np.empty(cap_c, complex), np.empty(cap_c, complex))
        work["buffers"] = flat
    real = lambda b: b[:need_r].reshape(rows, length)  # noqa: E731
    cplx = lambda b: b[:need_c].reshape(rows, half)  # noqa: E731
    return (real(flat[0]), [cplx(flat[2]), cplx(flat[3]), cplx(flat[4])], cplx(flat[5]),
            real(flat[1]))


def _flush(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a`` (non-negative) with entries below :data:`FLUSH` set to 0, and per row how many."""
    small = a < FLUSH
    return np.where(small, 0.0, a), small.sum(axis=-1)


def _l2_bound(x: tuple[float, float], y: tuple[float, float], length: int) -> float:
    """:func:`fft_error_l2` from the operands' ``(ℓ2, ℓ1)`` norms."""
    (n2x, n1x), (n2y, n1y) = x, y
    return FFT_ERROR_CONSTANT * U * (math.log2(length) + 2) * (n2x * n1y + n1x * n2y) * (1 + 1e-6)


def convolve_tilted(xs, ys, *, wxs, wys, wzs, eta: float, theta_h: float,
                    tags: tuple = (None, None)):
    """:func:`convolve` in double precision, with the part of each result row whose output
    weight is at least 1 taken from the convolution of the *tilted* rows ``x·w_x`` and ``y·w_y``
    (then divided by the output weight ``w_z``), the rest from the plain convolution.

    ``xs`` and ``ys`` (``None``: squaring) are sequences of rows; ``wxs``, ``wys`` and ``wzs`` the
    computed weights
    ``e^{θ(ℓ − c)}`` of the rows' entries and of the result's (``w_z(i + k) = w_x(i) w_y(k)`` for
    the exact weights; along a row they grow by ``e^{θh}``, ``theta_h = θh``), each within
    relative ``eta`` of the exact one.  Returns ``None`` if a tilted mass exceeds
    :data:`MAX_TILTED`; else the result rows (negatives clipped to 0), per row bounds on the ℓ1
    norm and on the weighted norm ``Σ_k |f_k| W_k`` of the absolute round-off ``f`` (Higham's
    bound, :func:`fft_error_l2`, in each domain, turned into these norms by Cauchy–Schwarz over
    the entries each domain serves — geometric sums of the weights — plus the entries flushed to
    0, :data:`FLUSH`), and ``(‖x‖_θ, ‖y‖_θ)`` per row (upper bounds of the operands' weighted
    norms).  The tilting itself is a relative perturbation of every term of a non-negative sum:
    the caller adds :func:`tilt_rel` to the relative bound.  ``tags``: for each operand, what
    determines its weights (``None``: do not reuse a kept transform)."""
    with np.errstate(over="ignore", invalid="ignore", under="ignore", divide="ignore"):
        return _convolve_tilted(xs, ys, wxs=wxs, wys=wys, wzs=wzs, eta=eta, theta_h=theta_h,
                                tags=tags)


def _convolve_tilted(xs, ys, *, wxs, wys, wzs, eta: float, theta_h: float, tags: tuple):
    rows, nx = len(xs), xs[0].size
    ny = nx if ys is None else ys[0].size
    n_out = nx + ny - 1
    length = sfft.next_fast_len(n_out, real=True)
    work = _workspace(2 * rows, length)
    busy: list = []  # spectrum buffers in use in this call (and the cached one)
    cache = _LOCAL.spectrum
    hit0 = cache.get("last")
    if hit0 is not None:
        busy.append(hit0[2][0])

    def spectrum_buffer():
        if work is None:
            return None
        for b in work[1]:  # views: compare the memory, not the objects
            if not any(np.may_share_memory(b, u) for u in busy):
                busy.append(b)
                return b
        return None  # pragma: no cover - three buffers, at most two in use

    def tilted(v, w, n: int):
        """The padded plain and tilted rows with entries below FLUSH set to 0 (at most ``n``
        per row), and per row ℓ1 and ℓ2 norms (rounded up)."""
        if work is None:
            buf = np.zeros((2 * rows, length))
        else:
            buf = work[0]
            buf[:, n:] = 0.0
        part = buf[:, :n]
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            for k in range(rows):
                part[k] = v[k]
                np.multiply(v[k], w[k], out=part[rows + k])
        np.copyto(part, 0.0, where=part < FLUSH)
        n1 = (part.sum(axis=1) * (1 + (math.log2(max(n, 2)) + 4) * U)).tolist()
        if not max(n1[rows:]) <= MAX_TILTED:
            return None
        # a row-wise dot product without BLAS (threaded BLAS spins on a shared machine)
        n2 = (np.sqrt(np.einsum("ij,ij->i", part, part)) * (1 + (n + 4) * U)).tolist()
        return buf, [float(n)] * (2 * rows), n1, n2

    def spectrum(v, w, n: int, tag):
        """The rows' transform and norms; the last one is kept for the next call (in r-fold
        composition the factor just multiplied is squared next: same rows — the same array
        objects, held here — same weights (``tag``: what determines them) and length)."""
        key = (tag, n, length, len(v))
        hit = cache.get("last")
        if tag is not None and hit is not None and hit[0] == key and \
                all(a is b for a, b in zip(hit[1], v)):
            return hit[2]
        t = tilted(v, w, n)
        if t is None:
            return None
        target = spectrum_buffer()
        if target is None:
            spec = sfft.rfft(t[0], axis=1)
        else:  # numpy's pocketfft (the same transform as scipy's) writes into the buffer
            spec = np.fft.rfft(t[0], axis=1, out=target)
        out = (spec, *t[1:])
        cache["last"] = (key, tuple(v), out)
        return out

    tx = spectrum(xs, wxs, nx, tags[0])
    if tx is None:
        return None
    if ys is None:
        ty = tx
    else:
        ty = spectrum(ys, wys, ny, tags[1])
        if ty is None:
            return None
    if work is None:
        out = sfft.irfft(tx[0] * ty[0], length, axis=1)
    else:
        prod = np.multiply(tx[0], ty[0], out=work[2])
        out = np.fft.irfft(prod, length, axis=1, out=work[3])
    _, cx, n1x, n2x = tx
    _, cy, n1y, n2y = ty
    z = np.empty((rows, n_out))
    l1 = np.empty(rows)
    wn = np.empty(rows)
    grow = (1 + eta) * (1 + 1e-6)
    geo = 1.0 / -math.expm1(-2 * theta_h)  # Σ_{m>=0} e^{-2θhm}
    for k in range(rows):
        w = wzs[k]
        t = rows + k
        f0 = _l2_bound((n2x[k], n1x[k]), (n2y[k], n1y[k]), length)
        ft = _l2_bound((n2x[t], n1x[t]), (n2y[t], n1y[t]), length) * (1 + eta) ** 2
        # the tilted result serves the entries of weight at least max(1, ft/f0): there its
        # round-off, divided by the weight, is at most the plain one's, so the plain ℓ1 bound
        # stays that of a plain convolution whatever the tilt (weights increase along the row)
        k0 = int(np.searchsorted(w, max(1.0, ft / f0) if f0 > 0 else 1.0))
        w_k0 = float(w[k0]) if k0 < n_out else math.inf
        w_k1 = float(w[k0 - 1]) if k0 > 0 else 0.0
        z[k, :k0] = out[k, :k0]
        np.divide(out[t, k0:n_out], w[k0:], out=z[k, k0:])
        # inputs flushed to 0 (an ℓ1 change of at most count·FLUSH each) change the plain
        # result by at most ...p and the tilted one by ...t (weighted ℓ1); on the entries the
        # plain result serves the weight is below max(1, w[k0-1]), on the tilted ones above 1
        flushed_p = FLUSH * (cx[k] * n1y[k] + cy[k] * n1x[k] + FLUSH * cx[k] * cy[k])
        flushed_t = FLUSH * (cx[t] * n1y[t] + cy[t] * n1x[t] + FLUSH * cx[t] * cy[t])
        # Σ over the tilted entries of W^-2 and over the plain ones of W² (geometric, exact
        # weights within 1 + eta of the computed ones)
        inv2 = (geo / (w_k0 * w_k0) if k0 < n_out else 0.0) * (1 + eta) ** 2
        sq = geo * w_k1 * w_k1 * (1 + eta) ** 2
        w_plain = max(1.0, w_k1 * (1 + eta))
        l1[k] = (math.sqrt(k0) * f0 + ft * math.sqrt(inv2) + flushed_p + flushed_t) * grow
        wn[k] = (f0 * math.sqrt(sq) + math.sqrt(n_out - k0) * ft + flushed_p * w_plain
                 + flushed_t) * grow
    z[z < FLUSH] = 0.0  # negatives (toward the true non-negative value) and subnormals
    grow_n = (1 + eta) * (1 + 4 * U)
    for k in range(rows):
        l1[k] += n_out * FLUSH
        wn[k] += n_out * FLUSH * float(wzs[k][-1]) * (1 + eta)
    norms = [[(n1x[rows + k] + cx[rows + k] * FLUSH) * grow_n for k in range(rows)],
             [(n1y[rows + k] + cy[rows + k] * FLUSH) * grow_n for k in range(rows)]]
    return z, l1.tolist(), wn.tolist(), norms


def tilt_rel(eta: float) -> float:
    """The relative error :func:`convolve_tilted` adds to an entry taken from the tilted
    convolution: both inputs' weights (``1 + eta`` each, the exact weights multiplying to the
    output's), the division by the computed output weight (``1 + eta``) and its rounding."""
    return (1 + eta) ** 3 * (1 + 2 * U) - 1


def _compose_weighted(*, rx, wex, nwx, ry, wey, nwy, fft_w):
    """The weighted counterpart of :func:`_compose_errors`: ``‖e_x * y‖_θ <= ‖e_x‖_θ ‖y‖_θ``
    (weights are multiplicative), with ``nwx``/``nwy`` the weighted norms of the computed finite
    operands and ``‖x*‖_θ <= (nwx + wex)/(1 − rx)``."""
    if not (rx < 1 and ry < 1 and math.isfinite(wex) and math.isfinite(wey)
            and math.isfinite(nwx) and math.isfinite(nwy) and math.isfinite(fft_w)):
        return math.inf
    true_nwx = (nwx + wex) / max(1e-300, 1 - rx)
    return (wex * nwy + (1 + rx) * true_nwx * wey + fft_w) * (1 + 4 * U)


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
    yy = x if y is None else y
    tilt = None if extended else _tilt(x, yy)
    # a product with a given-up lower pair has none either (its error bounds would be
    # infinite): then only the upper pair is convolved
    lower = lower_usable(x) and lower_usable(yy)
    nrows = 3 if lower else 1
    rows = lambda st: (st.pa, st.ma, st.bh)[:nrows]  # noqa: E731
    fft_w = np.full(3, math.inf)
    extra_rel = 0.0
    done = None
    if tilt is not None:
        wxs, wys, wzs, eta = tilt
        tag = lambda st: (st.start, st.size, st.bshift, st.h, st.theta, st.wref)  # noqa: E731
        done = convolve_tilted(rows(x), None if y is None else rows(y), wxs=wxs[:nrows],
                               wys=None if y is None else wys[:nrows], wzs=wzs[:nrows], eta=eta,
                               theta_h=x.theta * x.h, tags=(tag(x), None if y is None else tag(y)))
    if done is not None:
        out, fft_l1, fft_w, nw = done
        extra_rel = tilt_rel(eta)
    else:
        tilt = None
        ys = None if y is None else np.stack(rows(y))
        out, fft_l1 = convolve(np.stack(rows(x)), ys, extended)
    if not lower:
        pa = out[0]
        ma, bh = np.zeros_like(pa), np.zeros_like(pa)
        fft_l1 = [fft_l1[0], math.inf, math.inf]
        fft_w = [fft_w[0], math.inf, math.inf]
        if done is not None:
            nw = [[nw[0][0], math.inf, math.inf], [nw[1][0], math.inf, math.inf]]
    else:
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
    wabs = [math.inf] * 3
    if tilt is not None:
        for k, (rx, wex, ry, wey) in enumerate(((x.rel_up, x.wabs_up, yy.rel_up, yy.wabs_up),
                                                 (x.rel_ma, x.wabs_ma, yy.rel_ma, yy.wabs_ma),
                                                 (x.rel_bh, x.wabs_bh, yy.rel_bh, yy.wabs_bh))):
            wabs[k] = _compose_weighted(rx=rx, wex=wex, nwx=nw[0][k], ry=ry, wey=wey,
                                        nwy=nw[1][k], fft_w=fft_w[k]) * (1 + extra_rel)
        # the tilted entries' relative perturbation (and the absolute parts it scales)
        rel_up, rel_ma, rel_bh = ((1 + r) * (1 + extra_rel) - 1 for r in (rel_up, rel_ma, rel_bh))
        abs_up, abs_ma, abs_bh = (a * (1 + extra_rel) for a in (abs_up, abs_ma, abs_bh))
    if not lower:  # the lower pair is given up (its bounds are infinite: lower bound 0)
        d, rel_ma, abs_ma, rel_bh, abs_bh = 0.0, math.inf, math.inf, math.inf, math.inf
        wabs[1] = wabs[2] = math.inf
    # entries below this level are indistinguishable from round-off when choosing the window
    noise = 1e-3 * max(fft_l1[:2] if lower else fft_l1[:1]) / math.sqrt(pa.size)
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
        theta=x.theta if tilt is not None else 0.0,
        wref=x.wref + yy.wref,
        wabs_up=wabs[0],
        wabs_ma=wabs[1],
        wabs_bh=wabs[2],
    )
    return renormalize(fit(state, buckets=buckets, tail=tail, noise=noise, rounding=rounding))


def lower_usable(s: BucketState) -> bool:
    """Whether the lower pair of ``s`` still carries information (finite relative bounds below
    1; otherwise :func:`odp.buckets.readoff.delta_lower` is 0 and every product's lower pair is
    given up too)."""
    return s.rel_ma < 1 and s.rel_bh < 1


def _state_weights(s: BucketState, ref: float):
    """``(w_up, w_low)``: the weights of ``s``'s grid losses and of its shifted labels
    (:attr:`BucketState.lower_losses`), from one ``exp`` over both ranges; ``None`` if out of
    range."""
    lo = min(s.start, s.start - s.bshift)
    span = s.size + abs(s.bshift)
    w = tilt_weights((lo + np.arange(span, dtype=np.int64)) * s.h, s.theta, ref)
    if w is None:
        return None
    a, b = s.start - lo, s.start - s.bshift - lo
    return w[a:a + s.size], w[b:b + s.size]


def _tilt(x: BucketState, y: BucketState):
    """``(w_x rows, w_y rows, w_z rows, eta)`` for a tilted product of ``x`` and ``y`` (same
    grid; rows: pa, ma, bh), or ``None``: no common tilt, or weights out of range."""
    if not (x.theta > 0 and x.theta == y.theta and math.isfinite(x.wref)
            and math.isfinite(y.wref)):
        return None
    wx = _state_weights(x, x.wref)
    wy = wx if y is x else _state_weights(y, y.wref)
    n_out = x.size + y.size - 1
    z = BucketState(h=x.h, start=x.start + y.start, pa=np.empty(n_out), a_inf=0.0,
                    ma=np.empty(0), bh=np.empty(0), d=0.0, bshift=x.bshift + y.bshift,
                    theta=x.theta)
    wz = _state_weights(z, x.wref + y.wref)
    if wx is None or wy is None or wz is None:
        return None
    # every label of x, y and z (grid losses and shifted labels), for the weights' error bound
    bound = max(max(abs(st.start), abs(st.start - st.bshift), abs(st.start + n),
                    abs(st.start - st.bshift + n))
                for st, n in ((x, x.size), (y, y.size), (z, n_out))) * x.h + 2 * x.h
    eta = weight_error(bound, x.theta, abs(x.wref) + abs(y.wref))
    rows = lambda w: (w[0], w[1], w[1])  # noqa: E731
    return rows(wx), rows(wy), rows(wz), eta


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
