"""High-precision reference values for the privacy-bucket tests (mpmath), and checks of them.

Every reference here is computed independently of :mod:`odp.buckets` (closed forms, exact
enumeration, or numerical integration at 40 digits); the tests at the bottom check the
references against each other where two independent routes exist.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath as mp
import pytest

MPMATH_DPS = 40  # per-test precision, set by tests/conftest.py


def mpf(x) -> mp.mpf:
    if isinstance(x, Fraction):
        return mp.mpf(x.numerator) / x.denominator
    if isinstance(x, str):
        f = Fraction(x)
        return mp.mpf(f.numerator) / f.denominator
    return mp.mpf(x)


# ----------------------------------------------------------------------------- Gaussian


def gaussian_delta(mu, eps) -> mp.mpf:
    """Tight δ(ε) of the Gaussian mechanism with μ = Δ/σ (Balle & Wang 2018, Thm 8)."""
    mu, e = mpf(mu), mpf(eps)
    return mp.ncdf(-e / mu + mu / 2) - mp.exp(e) * mp.ncdf(-e / mu - mu / 2)


def gaussian_epsilon(mu, delta) -> mp.mpf:
    """Smallest ε >= 0 with δ(ε) <= delta (bisection at 40 digits)."""
    d = mpf(delta)
    if gaussian_delta(mu, 0) <= d:
        return mp.mpf(0)
    lo, hi = mp.mpf(0), mp.mpf(1)
    while gaussian_delta(mu, hi) > d:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if gaussian_delta(mu, mid) > d:
            lo = mid
        else:
            hi = mid
    return hi


def composed_gaussian_mu(sigmas_counts) -> mp.mpf:
    """k Gaussians with σ compose to one with μ = sqrt(Σ k/σ²) (sensitivity 1)."""
    return mp.sqrt(sum(mpf(k) / mpf(s) ** 2 for s, k in sigmas_counts))


# ----------------------------------------------------------------------------- KOV / RR


def kov_delta(eps0, delta0, k: int, eps) -> mp.mpf:
    """Tight δ(ε) of k-fold composition of (ε0, δ0)-DP (Kairouz–Oh–Viswanath, Thm 3.3),
    i.e. of the generalized randomized response; with δ0 = 0 also of binary RR(ε0)."""
    e0, d0, e = mpf(eps0), mpf(delta0), mpf(eps)
    p = 1 / (1 + mp.exp(-e0))
    s = mp.mpf(0)
    for l in range(k + 1):
        loss = (k - 2 * l) * e0
        if loss > e:
            s += mp.binomial(k, l) * p ** (k - l) * (1 - p) ** l * (1 - mp.exp(e - loss))
    return 1 - (1 - d0) ** k * (1 - s)


# ----------------------------------------------------------------------------- Laplace


def _irwin_hall_pdf(x, n: int):
    if x < 0 or x > n:
        return mp.mpf(0)
    return sum(
        (-1) ** j * mp.binomial(n, j) * (x - j) ** (n - 1) for j in range(int(mp.floor(x)) + 1)
    ) / mp.factorial(n - 1)


def laplace_delta(eps0, k: int, eps) -> mp.mpf:
    """Tight δ(ε) of k-fold Laplace with ε0 = Δ/b, by exact decomposition of the privacy loss.

    Under A one loss is ε0 w.p. 1/2, -ε0 w.p. e^{-ε0}/2, and has density e^{(t-ε0)/2}/4 on
    (-ε0, ε0).  The n-fold convolution of that density is ``(e^{-ε0/2}/4)^n e^{s/2} u_n(s)``
    with ``u_n`` the n-fold convolution of the indicator of (-ε0, ε0) (an Irwin–Hall density);
    each term is integrated by mpmath between the polynomial pieces.
    """
    e0, e = mpf(eps0), mpf(eps)
    p_plus, p_minus = mp.mpf(1) / 2, mp.exp(-e0) / 2
    c = mp.exp(-e0 / 2) / 4
    total = mp.mpf(0)
    for n_plus in range(k + 1):
        for n_minus in range(k - n_plus + 1):
            nc = k - n_plus - n_minus
            weight = (
                mp.factorial(k)
                / (mp.factorial(n_plus) * mp.factorial(n_minus) * mp.factorial(nc))
                * p_plus**n_plus
                * p_minus**n_minus
            )
            shift = (n_plus - n_minus) * e0
            if nc == 0:
                if shift > e:
                    total += weight * (1 - mp.exp(e - shift))
                continue
            lo = -nc * e0

            def integrand(s, nc=nc, shift=shift):
                if s + shift <= e:
                    return mp.mpf(0)
                u = (2 * e0) ** (nc - 1) * _irwin_hall_pdf((s + nc * e0) / (2 * e0), nc)
                return c**nc * mp.exp(s / 2) * u * (1 - mp.exp(e - shift - s))

            knots = sorted({lo + 2 * e0 * j for j in range(nc + 1)} | {min(max(e - shift, lo), -lo)})
            total += weight * mp.quad(integrand, knots)
    return total


# ----------------------------------------------------------------------------- finite pairs


def finite_delta_exact(p, q, k: int, eps) -> mp.mpf:
    """max over both directions of δ(ε) of the k-fold product, by enumerating outcomes."""
    p = [mpf(v) for v in p]
    q = [mpf(v) for v in q]
    e = mp.exp(mpf(eps))
    best = mp.mpf(0)
    for a, b in ((p, q), (q, p)):
        tot = mp.mpf(0)
        for idx in itertools.product(range(len(p)), repeat=k):
            pa = mp.fprod(a[i] for i in idx)
            pb = mp.fprod(b[i] for i in idx)
            tot += max(mp.mpf(0), pa - e * pb)
        best = max(best, tot)
    return best


def lattice_kfold_delta(masses: dict, lam, k: int, eps) -> mp.mpf:
    """δ(ε) of k-fold composition of a pair whose loss is ``n * lam`` with A-mass ``masses[n]``
    (B-mass then ``masses[n] e^{-n lam}``): exact convolution of the loss distribution."""
    dist = {0: mp.mpf(1)}
    for _ in range(k):
        new: dict = {}
        for n1, w1 in dist.items():
            for n2, w2 in masses.items():
                new[n1 + n2] = new.get(n1 + n2, 0) + w1 * w2
        dist = new
    lam, e = mpf(lam), mpf(eps)
    return sum(
        (w * (1 - mp.exp(e - n * lam)) for n, w in dist.items() if n * lam > e), mp.mpf(0)
    )


def discrete_gaussian_masses(sigma, sensitivity: int = 1, reach: int = 60) -> dict:
    """Loss-lattice masses of the discrete Gaussian: loss ``(Δ - 2x) Δ/(2σ²)`` at output x."""
    s2 = mpf(sigma) ** 2
    xs = range(-reach, reach + sensitivity + 1)
    z = mp.fsum(mp.exp(-mp.mpf(x) ** 2 / (2 * s2)) for x in range(-4 * reach, 4 * reach + 1))
    masses: dict = {}
    for x in xs:
        n = sensitivity - 2 * x
        masses[n] = masses.get(n, 0) + mp.exp(-mp.mpf(x) ** 2 / (2 * s2)) / z
    return masses


def gaussian_mixture_delta(mu, eps, *, laplace_eps0=None, rr_eps=None) -> mp.mpf:
    """δ(ε) of a Gaussian (μ) composed with at most one Laplace (ε0) and one binary randomized
    response (ε): the losses add, so ``δ(ε) = E[δ_G(ε - L_Lap - L_RR)]`` with ``δ_G`` the
    Gaussian's closed form (valid at every real argument).  Under A, RR's loss is ±ε with masses
    e^ε/(1+e^ε), 1/(1+e^ε); Laplace's is ±ε0 with masses 1/2, e^{-ε0}/2 plus the density
    e^{(t-ε0)/2}/4 on (-ε0, ε0) (one smooth integral).  All three pairs are symmetric."""
    rr = [(mp.mpf(0), mp.mpf(1))]
    if rr_eps is not None:
        r = mpf(rr_eps)
        rr = [(r, mp.exp(r) / (1 + mp.exp(r))), (-r, 1 / (1 + mp.exp(r)))]
    total = mp.mpf(0)
    for l_rr, w_rr in rr:
        x = mpf(eps) - l_rr
        if laplace_eps0 is None:
            total += w_rr * gaussian_delta(mu, x)
            continue
        e0 = mpf(laplace_eps0)
        part = gaussian_delta(mu, x - e0) / 2 + mp.exp(-e0) / 2 * gaussian_delta(mu, x + e0)
        part += mp.quad(lambda t: mp.exp((t - e0) / 2) / 4 * gaussian_delta(mu, x - t), [-e0, e0])
        total += w_rr * part
    return total


def as_fraction(x: mp.mpf) -> Fraction:
    return Fraction(mp.nstr(x, 35, min_fixed=-400, max_fixed=400))


# ----------------------------------------------------------------------------- checks


def test_gaussian_reference_matches_numerical_integration():
    mu, eps = mp.mpf("0.7"), mp.mpf("0.3")
    # δ = E_A[(1 - e^{eps - L})_+], L ~ N(mu²/2, mu²)
    f = lambda t: mp.npdf(t, mu**2 / 2, mu) * (1 - mp.exp(eps - t))
    assert mp.almosteq(mp.quad(f, [eps, mp.inf]), gaussian_delta(mu, eps), rel_eps=mp.mpf(10) ** -30)


def test_gaussian_epsilon_inverts_delta():
    mu = mp.sqrt(1000)
    eps = gaussian_epsilon(mu, "1e-5")
    assert abs(float(eps) - 633.9299) < 1e-4
    assert mp.almosteq(gaussian_delta(mu, eps), mp.mpf("1e-5"), rel_eps=mp.mpf(10) ** -20)


def test_kov_reference_matches_enumeration():
    e0 = mp.mpf("0.4")
    p = [mp.exp(e0) / (1 + mp.exp(e0)), 1 / (1 + mp.exp(e0))]
    for k, eps in ((1, 0), (3, "0.2"), (4, "0.5")):
        assert mp.almosteq(kov_delta(e0, 0, k, eps), finite_delta_exact(p, p[::-1], k, eps), rel_eps=mp.mpf(10) ** -25)


@pytest.mark.parametrize("eps0,eps", [("0.5", "0"), ("1", "0.3"), ("0.1", "0.05")])
def test_laplace_reference_single_fold_closed_form(eps0, eps):
    closed = max(mp.mpf(0), 1 - mp.exp((mpf(eps) - mpf(eps0)) / 2))
    assert mp.almosteq(laplace_delta(eps0, 1, eps), closed, rel_eps=mp.mpf(10) ** -25)


@pytest.mark.slow  # a nested mpmath quadrature
def test_laplace_reference_two_fold_against_direct_integration():
    with mp.workdps(15):
        _laplace_two_fold_check()


def _laplace_two_fold_check():
    e0, eps = mp.mpf("0.8"), mp.mpf("0.4")
    # direct: outputs x1, x2 ~ Lap(0,1) (b = 1/e0 scaled), loss = sum of clipped losses
    b = 1 / e0

    def loss(x):
        return (abs(x - 1) - abs(x)) / b

    def dens(x):
        return mp.exp(-abs(x) / b) / (2 * b)

    def inner(x1):
        kink = (1 - b * (eps - loss(x1))) / 2  # where loss(x1) + loss(x2) = eps
        cuts = sorted({-mp.inf, mp.mpf(0), mp.mpf(1), mp.inf} | ({kink} if 0 < kink < 1 else set()))
        return mp.quad(lambda x2: dens(x2) * max(mp.mpf(0), 1 - mp.exp(eps - loss(x1) - loss(x2))), cuts)

    outer_kinks = {(1 - b * (eps - t)) / 2 for t in (e0, -e0)}
    cuts = sorted({-mp.inf, mp.mpf(0), mp.mpf(1), mp.inf} | {k for k in outer_kinks if 0 < k < 1})
    direct = mp.quad(lambda x1: dens(x1) * inner(x1), cuts)
    with mp.workdps(40):
        ref = laplace_delta(mp.mpf("0.8"), 2, mp.mpf("0.4"))
    assert mp.almosteq(direct, ref, rel_eps=mp.mpf(10) ** -10)


def test_lattice_reference_matches_kov():
    e0 = mp.mpf("0.3")
    p = mp.exp(e0) / (1 + mp.exp(e0))
    masses = {1: p, -1: 1 - p}
    assert mp.almosteq(lattice_kfold_delta(masses, e0, 7, "0.5"), kov_delta(e0, 0, 7, "0.5"), rel_eps=mp.mpf(10) ** -25)
