"""Fig. 1 of Hartmann et al. 2022: noise of a sparse-vector release with and without ODP (Sec. 4.1).

A vector of 100 entries, each 0 or 1000; threshold 500; cut-off c = 20; ε = 1 split into
ε1 + ε2 = 1/2 for SVT (ratio ε1/ε2 = 1/(2c)^{2/3}) and ε3 = 1/2 for the release; Δ = 1.
Without ODP every released entry gets Laplace noise of scale cΔ/ε3 = 40.  With ODP, after SVT
selected c' entries, each gets scale ``c'Δ/(ε3 + (c − c')/c·ε2)``.  Plotted against the number
of large entries: the mean absolute noise per released entry,

* exactly: ``E[b(c') | c' ≥ 1]`` with ``P(c' = k)`` integrated over the threshold noise ρ (given
  ρ the answers are independent, so ``c' = min(c, X + Y)`` with two binomials), for the
  continuous Laplace noise of Alg. 2 (the mechanism discretises it on the grid g = Δ/1000);
* by simulation of the real mechanisms (discrete noise, insecure seeded RNG): the mean of
  ``|released − true|`` over the released entries, averaged over runs (±1 standard error).

The paper plots a Chebyshev upper bound on the ODP expectation; here the expectation itself.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np
from scipy import special, stats

from ..mechanisms.noise import LaplaceMechanism
from ..mechanisms.svt import SparseVectorMechanism, entry_epsilon, svt_split
from ..progress import Reporter
from ..samplers import SeededRandom
from . import Figure, require_matplotlib

ENTRIES = 100
LARGE = 1000
THRESHOLD = 500
C = 20
EPS_SVT = Fraction(1, 2)
EPS3 = Fraction(1, 2)
SENSITIVITY = 1


def _laplace_sf(x: np.ndarray, scale: float) -> np.ndarray:
    """P(ν ≥ x) for continuous Laplace(scale)."""
    return np.where(x >= 0, 0.5 * np.exp(-np.abs(x) / scale), 1 - 0.5 * np.exp(-np.abs(x) / scale))


def count_distribution(large: int, eps1: float, eps2: float, *, nodes: int = 600) -> np.ndarray:
    """``P(c' = k)`` for k = 0..C (continuous-noise model), by Gauss–Legendre quadrature over ρ
    on each side of 0 out to 45 scales (the omitted mass is < e^{−45})."""
    rho_scale = SENSITIVITY / eps1
    nu_scale = 2 * C * SENSITIVITY / eps2
    xs, ws = special.roots_legendre(nodes)
    reach = 45 * rho_scale
    z = np.concatenate([(xs + 1) / 2 * reach, -(xs + 1) / 2 * reach])
    w = np.concatenate([ws, ws]) * reach / 2 * np.exp(-np.abs(z) / rho_scale) / (2 * rho_scale)
    p_big = _laplace_sf(THRESHOLD - LARGE + z, nu_scale)
    p_small = _laplace_sf(THRESHOLD + z, nu_scale)
    counts = np.arange(ENTRIES + 1)
    total = np.zeros(C + 1)
    for pb, ps, wt in zip(p_big, p_small, w):
        conv = np.convolve(stats.binom.pmf(counts[:large + 1], large, pb),
                           stats.binom.pmf(counts[:ENTRIES - large + 1], ENTRIES - large, ps))
        total[:C] += wt * conv[:C]
        total[C] += wt * conv[C:].sum()
    return total


def exact_curves(larges: list[int]) -> dict[str, list[float]]:
    eps1, eps2 = svt_split(EPS_SVT, C)
    no_odp = float(SENSITIVITY / entry_epsilon(0, C, eps2, EPS3, odp=False))
    with_odp = []
    for large in larges:
        pk = count_distribution(large, float(eps1), float(eps2))
        scales = np.array([0.0] + [float(SENSITIVITY / entry_epsilon(k, C, eps2, EPS3))
                                   for k in range(1, C + 1)])
        with_odp.append(float((pk[1:] * scales[1:]).sum() / pk[1:].sum()))
    return {"no_odp": [no_odp] * len(larges), "odp": with_odp}


def simulate(larges: list[int], runs: int, seed: int,
             progress: Any = None) -> dict[str, list[float]]:
    """Mean |noise| per released entry of the real grid mechanisms, with standard errors."""
    eps1, eps2 = svt_split(EPS_SVT, C)
    rng = SeededRandom(seed)
    layout = np.random.default_rng(seed)
    queries = [lambda v, i=i: abs(v[i]) for i in range(ENTRIES)]
    svt = SparseVectorMechanism(queries, THRESHOLD, epsilon1=eps1, epsilon2=eps2, c=C,
                                sensitivity=SENSITIVITY)
    plain = LaplaceMechanism(lambda v: v, epsilon=entry_epsilon(0, C, eps2, EPS3, odp=False),
                             sensitivity=SENSITIVITY)
    out: dict[str, list[float]] = {"odp": [], "odp_se": [], "no_odp": [], "no_odp_se": []}
    with Reporter(progress, len(larges), "figure 1: simulating", unit="point") as bar:
        for large in larges:
            _simulate_point(large=large, runs=runs, svt=svt, plain=plain, layout=layout, rng=rng, eps2=eps2, out=out)
            bar.advance()
    return out


def _simulate_point(*, large, runs, svt, plain, layout, rng, eps2, out) -> None:
    """One x-value of the simulation: ``runs`` vectors with ``large`` large entries."""
    odp_runs, plain_runs = [], []
    for _ in range(runs):
        vector = [0] * ENTRIES
        for i in layout.choice(ENTRIES, size=large, replace=False):
            vector[i] = LARGE
        answers = svt.release(vector, rng)
        selected = [i for i, a in enumerate(answers) if a]
        if not selected:
            continue
        mech = LaplaceMechanism(lambda v: v, sensitivity=SENSITIVITY,
                                epsilon=entry_epsilon(len(selected), C, eps2, EPS3))
        odp_runs.append(np.mean([float(abs(mech.release(vector[i], rng) - vector[i]))
                                 for i in selected]))
        plain_runs.append(np.mean([float(abs(plain.release(vector[i], rng) - vector[i]))
                                   for i in selected]))
    for key, vals in (("odp", odp_runs), ("no_odp", plain_runs)):
        out[key].append(float(np.mean(vals)))
        out[key + "_se"].append(float(np.std(vals, ddof=1) / np.sqrt(len(vals))))


def render(path: str, options: dict[str, Any]) -> dict[str, Any]:
    quick = bool(options.get("quick"))
    seed = options.get("seed")
    seed = 0 if seed is None else int(seed)
    larges = [1, 5, 10, 15, 20] if quick else list(range(1, C + 1))
    runs = 8 if quick else 60
    exact = exact_curves(larges)
    sim = simulate(larges, runs, seed, options.get("progress"))
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.plot(larges, exact["no_odp"], "-", color="tab:red", label="without ODP (exact)")
    ax.errorbar(larges, sim["no_odp"], yerr=sim["no_odp_se"], fmt="s", color="tab:red",
                markersize=4, capsize=2, label=f"without ODP (simulation, {runs} runs)")
    ax.plot(larges, exact["odp"], "-", color="tab:blue", label="with ODP (exact expectation)")
    ax.errorbar(larges, sim["odp"], yerr=sim["odp_se"], fmt="o", color="tab:blue",
                markersize=4, capsize=2, label=f"with ODP (simulation, {runs} runs)")
    ax.set_xlabel("number of large entries (value 1000) among 100")
    ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax.set_ylabel("mean absolute noise per released entry")
    ax.set_title("Sparse vector release: c = 20, ε = 1 (ε₁+ε₂ = ½, ε₃ = ½), Δ = 1")
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    eps1, eps2 = svt_split(EPS_SVT, C)
    return {"large_entries": larges, "runs": runs, "seed": seed, "epsilon1": str(eps1),
            "epsilon2": str(eps2), "epsilon3": str(EPS3), "exact": exact, "simulation": sim}


FIGURES = {
    "1": Figure("1", "Sparse vector release: noise with and without ODP "
                     "(Hartmann et al. 2022, Fig. 1)", render, seconds=(20.0, 3.0)),
}
