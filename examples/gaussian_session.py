"""A Gaussian-heavy session in a zCDP lane: how many count releases fit a budget.

    python examples/gaussian_session.py            # or: … LEDGER
    python examples/gaussian_session.py --compare  # first the table of docs/filters.md

Gaussian count releases (σ = 10, sensitivity 1: ρ = 0.005 each, the discrete Gaussian's zCDP,
Canonne–Kamath–Steinke 2020, Thm. 4) on a synthetic dataset, under a budget of (ε = 2, δ = 1e-5)
held by one zCDP lane (``odp.Accountant(…, composition="zcdp")``): Σρ ≤ ρ_lane, converted once at
δ = 1e-5 (docs/filters.md, "Composition lanes").  The run goes until the lane refuses a release
(before drawing its noise, recording nothing), writes and verifies the certificate, and ends with
one line ``fit: N``.

``--compare`` first prints the releases that fit the same budget three ways — odp's zCDP lane,
odp without lanes (each release converted to (ε, δ) on its own at δ/n, the best n), and OpenDP's
fully adaptive zCDP composition with its privacy filter (run here, if OpenDP is installed) — the
table of docs/filters.md.
"""

from __future__ import annotations

import os
import sys
import tempfile
from fractions import Fraction

import numpy as np

import odp
from odp.certs.verify import verify_file

EPSILON, DELTA, SIGMA = Fraction(2), Fraction(1, 10**5), 10


def odp_today() -> tuple[int, int]:
    """Releases that fit without lanes: each ρ = 0.005 charged as DP at δ/n (the accountant's δ
    split, ``acc.charge(ZCDP(ρ), delta=δ/n)``), for the best n; returns (fit, n)."""
    best = (0, 0)
    for n in range(1, 40):
        acc = odp.Accountant(EPSILON, DELTA)
        fit = 0
        try:
            while True:
                acc.charge(odp.ZCDP(Fraction(1, 2 * SIGMA * SIGMA)), delta=DELTA / n)
                fit += 1
        except odp.BudgetExceeded:
            pass
        if fit > best[0]:
            best = (fit, n)
    return best


def opendp_filter() -> int | None:
    """Releases OpenDP 0.16 fits: its fully adaptive zCDP composition (an odometer) under its
    privacy filter, with the largest ρ whose OpenDP conversion at δ is at most ε (bisection on
    OpenDP's own zCDP → (ε, δ) map); None without OpenDP."""
    try:
        import opendp.prelude as dp
    except ImportError:
        return None
    dp.enable_features("contrib")
    domain, metric = dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance()
    count = dp.t.make_count(domain, metric) >> dp.m.then_gaussian(scale=float(SIGMA))

    def epsilon_of(rho: float) -> float:
        g = dp.m.make_gaussian(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float),
                               scale=(1 / (2 * rho)) ** 0.5)
        return float(dp.c.make_zCDP_to_approxDP(g).map(1.0).epsilon(float(DELTA)))

    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if epsilon_of(mid) <= EPSILON else (lo, mid)
    odometer = dp.c.make_fully_adaptive_composition(domain, metric,
                                                    dp.zero_concentrated_divergence())
    queryable = dp.c.make_privacy_filter(odometer, d_in=1, d_out=lo)(list(range(100)))
    fit = 0
    while True:
        try:
            queryable(count)
        except dp.OpenDPException:
            return fit
        fit += 1


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--compare"]
    if "--compare" in sys.argv[1:]:
        today, n = odp_today()
        opendp = opendp_filter()
        print("releases that fit (σ = 10, ρ = 0.005 each; budget ε = 2, δ = 1e-5):")
        print("  odp, zCDP lane (Σρ converted once):            see 'fit:' below")
        print(f"  odp without lanes (δ split over {n} releases): {today}")
        print("  OpenDP 0.16 zCDP odometer + privacy filter:    "
              + ("not installed" if opendp is None else str(opendp)))
    ledger = args[0] if args else os.path.join(tempfile.mkdtemp(), "gaussian.db")
    rng = np.random.default_rng(0)
    ages = rng.integers(18, 90, size=1000).tolist()  # synthetic: 1,000 ages
    acc = odp.Accountant(EPSILON, DELTA, ledger=ledger, composition="zcdp")
    count = odp.GaussianMechanism(lambda d: sum(1 for a in d if a >= 65), epsilon=1,
                                  sigma=SIGMA)
    assert count.zcdp.rho == Fraction(1, 200)
    fit = 0
    while True:
        try:
            value = acc.run(count, ages)
        except odp.BudgetExceeded as refused:
            print(f"refused: {refused}")
            break
        fit += 1
        if fit <= 3:
            print(f"release {fit}: {float(value):.3f} people aged 65 or more")
    print(acc.describe())
    path = ledger + ".cert"
    acc.certificate().write(path)
    result = verify_file(path)
    if not result.ok:
        raise SystemExit(f"the certificate did not verify: {result.message}")
    print(f"certificate {path}: {result.message}")
    acc.close()
    print(f"fit: {fit}")


if __name__ == "__main__":
    main()
