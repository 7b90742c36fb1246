"""Independent references for the Poisson-subsampled mechanisms (no :mod:`odp.buckets` code).

Pairs (module docstring of :mod:`odp.buckets.subsampled`): with ``Q0`` the base noise, ``A0`` the
base noise shifted by the sensitivity and ``P = (1-q) Q0 + q A0``, the *remove* pair is
``(P, Q0)`` and the *add* pair ``(Q0, P)``; the tight δ(ε) of T runs under add/remove neighbours
is the larger of the two T-fold hockey-stick divergences.

* :func:`delta1` -- one run, closed form (normal CDFs at the crossing point ``g(ε)``, or the
  Laplace pieces), at mpmath precision, for any real ε;
* :func:`delta2` -- two runs: ``H(P⊗P ‖ Q⊗Q)(ε) = E_{x~P} H(P ‖ Q)(ε - L(x))`` as one
  ``mpmath.quad`` of the closed form (split at its kinks);
* :func:`grid_bracket` -- T runs: a plain numpy privacy-loss-distribution computation on a fine
  grid, written separately from the package: losses rounded *up* to the grid (a dominating pair,
  Meiser & Mohammadi §3: an upper bound) and exact bucket masses (a post-processing: a lower
  bound), composed by FFT; first order in the grid step, so a bracket of width about ``T h``.
"""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
from scipy import special
from test_buckets_refs import mpf


# ----------------------------------------------------------------------------- one run


def _g(l, q):
    """Base loss r with ln(1 - q + q e^r) = l (None when l <= ln(1-q): every r is above)."""
    s = mp.exp(l) - (1 - q)
    return None if s <= 0 else mp.log(s / q)


def _phi(r, q):
    return mp.log(1 - q + q * mp.exp(r))


class Gaussian:
    """Base pair Q0 = N(0, 1), A0 = N(μ, 1) (μ = Δ/σ); base loss r = μ z - μ²/2 in Q0's z."""

    def __init__(self, q, mu):
        self.q, self.mu = mpf(q), mpf(mu)

    def cdf_q(self, r):  # Q0[base loss <= r]
        return mp.ncdf((r + self.mu**2 / 2) / self.mu)

    def cdf_a(self, r):
        return mp.ncdf((r - self.mu**2 / 2) / self.mu)


class Laplace:
    """Base pair Q0 = Lap(0, b), A0 = Lap(Δ, b) (ε0 = Δ/b): r = ε0 with Q0-mass e^{-ε0}/2, -ε0
    with mass 1/2, density e^{(-r-ε0)/2}/4 between (A0: e^{(r-ε0)/2}/4, atoms 1/2 and e^{-ε0}/2)."""

    def __init__(self, q, e0):
        self.q, self.e0 = mpf(q), mpf(e0)

    def cdf_q(self, r):
        e0 = self.e0
        if r < -e0:
            return mp.mpf(0)
        if r >= e0:
            return mp.mpf(1)
        return mp.mpf(1) / 2 + (1 - mp.exp((-r - e0) / 2)) / 2

    def cdf_a(self, r):
        e0 = self.e0
        if r < -e0:
            return mp.mpf(0)
        if r >= e0:
            return mp.mpf(1)
        return mp.exp(-e0) / 2 + (mp.exp((r - e0) / 2) - mp.exp(-e0)) / 2


def delta1(base, eps, direction: str):
    """Hockey-stick divergence of one run at real ε: remove ``H_{e^ε}(P ‖ Q0)``, add
    ``H_{e^ε}(Q0 ‖ P)``."""
    q, e = base.q, mpf(eps)
    if direction == "remove":  # L > ε  <=>  r > g(ε)
        t = _g(e, q)
        if t is None:
            return 1 - mp.exp(e)
        p_above = (1 - q) * (1 - base.cdf_q(t)) + q * (1 - base.cdf_a(t))
        return p_above - mp.exp(e) * (1 - base.cdf_q(t))
    # add: L' = -φ(r) > ε  <=>  r < g(-ε)  (r <= for the atoms: P[L' > ε] uses r < t)
    t = _g(-e, q)
    if t is None:
        return mp.mpf(0)
    cq, ca = _below(base, t)
    return cq - mp.exp(e) * ((1 - q) * cq + q * ca)


def _below(base, t):
    """Q0[r < t], A0[r < t] (strictly below: matters only at the Laplace atoms)."""
    if isinstance(base, Laplace):
        eps = mp.mpf(10) ** (-mp.mp.dps + 5)
        return base.cdf_q(t - eps * (1 + abs(t))), base.cdf_a(t - eps * (1 + abs(t)))
    return base.cdf_q(t), base.cdf_a(t)


def delta(base, eps, T: int = 1):
    """The tight δ(ε) of ``T`` runs (``T`` in {1, 2}) under add/remove neighbours."""
    f = delta1 if T == 1 else delta2
    return max(f(base, eps, "remove"), f(base, eps, "add"))


def delta2(base, eps, direction: str):
    """Two runs: ``E_{x~A}[H(A ‖ B)(ε - L(x))]`` by ``mpmath.quad`` (kinks as break points)."""
    q, e = base.q, mpf(eps)
    lo = mp.log(1 - q)
    if isinstance(base, Gaussian):
        mu = base.mu

        def loss(z):  # remove loss of the point z (Q0 coordinates)
            return _phi(mu * z - mu**2 / 2, q)

        if direction == "remove":
            dens = lambda z: (1 - q) * mp.npdf(z) + q * mp.npdf(z - mu)  # noqa: E731
            f = lambda z: dens(z) * delta1(base, e - loss(z), "remove")  # noqa: E731
            kink = _g(e - lo, q)  # where ε - L(z) = ln(1-q)
        else:
            f = lambda z: mp.npdf(z) * delta1(base, e + loss(z), "add")  # noqa: E731
            kink = _g(-e - lo, q)  # where ε + φ = -ln(1-q)
        pts = [-mp.inf] + ([] if kink is None else [(kink + mu**2 / 2) / mu]) + [mp.inf]
        return mp.quad(f, pts)
    e0 = base.e0
    # atoms: r = ±ε0; continuous part on (-ε0, ε0)
    if direction == "remove":
        def w_at(r):  # P-mass of the atom at r
            return (1 - q) * (1 / 2 if r < 0 else mp.exp(-e0) / 2) + q * (
                mp.exp(-e0) / 2 if r < 0 else mp.mpf(1) / 2)

        def dens(r):
            return (1 - q) * mp.exp((-r - e0) / 2) / 4 + q * mp.exp((r - e0) / 2) / 4

        def inner(r):
            return delta1(base, e - _phi(r, q), "remove")
    else:
        def w_at(r):
            return mp.mpf(1) / 2 if r < 0 else mp.exp(-e0) / 2

        def dens(r):
            return mp.exp((-r - e0) / 2) / 4

        def inner(r):
            return delta1(base, e + _phi(r, q), "add")
    total = w_at(-e0) * inner(-e0) + w_at(e0) * inner(e0)
    cuts = [-e0, e0]
    for c in (_g(e - lo, q), _g(-e - lo, q), _g(e - _phi(e0, q), q), _g(e - _phi(-e0, q), q),
              _g(-e - _phi(e0, q), q) if -e - _phi(e0, q) > lo else None,
              _g(-e - _phi(-e0, q), q) if -e - _phi(-e0, q) > lo else None):
        if c is not None and -e0 < c < e0:
            cuts.append(c)
    cuts = sorted(set(cuts))
    return total + mp.quad(lambda r: dens(r) * inner(r), cuts)


def gaussian_hockey(mu, eps):
    """``H_{e^ε}(N(μ,1) ‖ N(0,1))`` at any real ε (Balle & Wang 2018, Thm 8)."""
    mu, e = mpf(mu), mpf(eps)
    return mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2)


def delta_with_gaussian(base, mu2, eps):
    """One run of the Poisson-subsampled Gaussian ``base`` and one plain Gaussian (μ2 = Δ/σ2),
    add/remove: ``max_dir E_{x~A_dir}[H_G(ε - L_dir(x))]`` (the plain Gaussian's pair is the
    same in both directions), one ``mpmath.quad`` per direction."""
    q, mu, e = base.q, base.mu, mpf(eps)
    out = []
    for direction in ("remove", "add"):
        if direction == "remove":
            f = lambda z: (((1 - q) * mp.npdf(z) + q * mp.npdf(z - mu))  # noqa: E731
                           * gaussian_hockey(mu2, e - _phi(mu * z - mu**2 / 2, q)))
        else:
            f = lambda z: mp.npdf(z) * gaussian_hockey(mu2, e + _phi(mu * z - mu**2 / 2, q))  # noqa: E731
        out.append(mp.quad(f, [-mp.inf, 0, mu, mp.inf]))
    return max(out)


def _bracket(delta_fn, d, hi, steps):
    """``(lo, hi)`` around the smallest ε >= 0 with ``delta_fn(ε) <= d`` (``delta_fn``
    decreasing): doubling from ``hi``, then ``steps`` bisections; ``(0, 0)`` if ε = 0 does.
    Works in the type of ``hi`` (float or mpmath)."""
    zero = 0 * hi
    if delta_fn(zero) <= d:
        return zero, zero
    lo = zero
    while delta_fn(hi) > d:
        lo, hi = hi, 2 * hi
    for _ in range(steps):
        mid = (lo + hi) / 2
        if delta_fn(mid) > d:
            lo = mid
        else:
            hi = mid
    return lo, hi


def epsilon_bisect(delta_fn, target, hi=1.0, steps=80):
    """Smallest ε >= 0 with ``delta_fn(ε) <= target`` (bisection; ``delta_fn`` decreasing)."""
    return _bracket(delta_fn, mpf(target), mp.mpf(hi), steps)[1]


# ----------------------------------------------------------------------------- T runs, grid


def _interval_mass(z_lo, z_hi):
    """P[z_lo < Z <= z_hi] from the CDF where both ends are <= 0, else from the survival
    function (no cancellation against 1 in the right tail)."""
    left = special.ndtr(z_hi) - special.ndtr(z_lo)
    right = special.ndtr(-z_lo) - special.ndtr(-z_hi)
    return np.where(z_hi <= 0, left, right)


def _gauss_grid(q: float, mu: float, h: float, direction: str, tail: float = 1e-18):
    """Bucket masses ``(first, A, B, A beyond the grid)`` of one run on the grid ``k h``:
    bucket ``k`` holds the losses in ``((k-1)h, kh]``."""
    m = mu * mu / 2
    zt = -special.ndtri(tail) + mu
    lo = math.log1p(-q)
    hi = math.log1p(q * math.expm1(mu * zt - m))
    ks = np.arange(math.floor(lo / h) + 1, math.ceil(hi / h) + 1)
    s = np.expm1(ks * h) + q
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(s > 0, np.log(s / q), -np.inf)
    z = (t + m) / mu
    z_lo = np.concatenate(([-np.inf], z[:-1]))
    mq = _interval_mass(z_lo, z)
    ma = _interval_mass(z_lo - mu, z - mu)
    pm = (1 - q) * mq + q * ma
    beyond_p = (1 - q) * special.ndtr(-z[-1]) + q * special.ndtr(-(z[-1] - mu))
    if direction == "remove":
        return int(ks[0]), pm, mq, beyond_p
    # add: loss -φ; add bucket k' = 1 - k holds the remove bucket k (losses [-kh, -(k-1)h))
    beyond_q = special.ndtr(-z[-1])  # Q0-mass of add losses below the grid
    return -int(ks[-1]) + 1, mq[::-1], pm[::-1], beyond_q


def grid_bracket(q: float, mu: float, T: int, delta: float, h: float = 1e-4):
    """``(ε_lower, ε_upper)`` of T runs of the Poisson-subsampled Gaussian (μ = Δ/σ) under
    add/remove, by a plain numpy PLD on the grid ``k h`` (float64 FFTs):

    * lower: the buckets with their A- and B-masses, composed (a post-processing of the true
      pair, so ``Σ max(0, A - e^ε B)`` is a lower bound; tails dropped);
    * upper: every bucket split into two atoms at its ends, ``(e^{kh} B - A)/(e^h - 1)`` of its
      A-mass at the bottom and the rest at the top (a dominating pair: Meiser & Mohammadi's
      error-corrected rounding, written out here again), the mass above the grid at infinite
      loss and the mass below moved to the lowest point.

    The float64 round-off is not bounded here (about 1e-16 of the largest entries per FFT,
    negligible at δ = 1e-5); the discretisation is second order in ``h``.
    """
    from scipy.signal import fftconvolve

    def power(v, n):
        out, base = None, v
        while n:
            if n & 1:
                out = base if out is None else np.maximum(fftconvolve(out, base), 0.0)
            n >>= 1
            if n:
                base = np.maximum(fftconvolve(base, base), 0.0)
        return out

    lows, ups = [], []
    for direction in ("remove", "add"):
        first, a, b, beyond = _gauss_grid(q, mu, h, direction)
        ks = first + np.arange(a.size)
        excess = np.exp(ks * h) * b - a
        beta = np.clip(excess / math.expm1(h), 0.0, a)
        up = np.zeros(a.size + 1)  # points (first-1)h .. last h
        up[1:] += a - beta
        up[:-1] += beta
        inf_mass = beyond if direction == "remove" else 0.0
        if direction == "add":
            up[0] += beyond
        up_t = power(up, T)
        a_t, b_t = power(a, T), power(b, T)
        inf_t = 1 - (1 - inf_mass) ** T
        up_losses = (T * (first - 1) + np.arange(up_t.size)) * h

        def d_up(e):
            sel = up_losses > e
            return inf_t + float((up_t[sel] * -np.expm1(e - up_losses[sel])).sum())

        def d_lo(e):
            return float(np.maximum(a_t - np.exp(e) * b_t, 0.0).sum())

        ups.append(_search(d_up, delta, upper=True))
        lows.append(_search(d_lo, delta, upper=False))
    return max(lows), max(ups)


def _search(fn, delta, upper: bool, iters=60):
    lo, hi = _bracket(fn, delta, 1.0, iters)
    return hi if upper else lo
