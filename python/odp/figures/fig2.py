"""Fig. 2 of Hartmann et al. 2022: the 95th percentile of the test noise of LogRegWithTest (Alg. 5).

Alg. 5 adds Laplace(a/ε2) noise to the model's test error, with
``a = max(2/n_test, 2(exp(2/(n_train Λ)) − 1))``.  If the error exceeds the threshold by more
than the noise's 95th percentile ``(a/ε2)·ln 10``, the model is withheld (⊥, and ε1 − ε2 is
refunded) with probability at least 95%.  Plotted for Λ = 1, a 70/30 train/test split,
several ε2 and database sizes n:

* lines: the paper's closed form (:func:`odp.mechanisms.erm.error_noise_percentile`);
* markers: the empirical 95th percentile of the noise that
  :class:`odp.mechanisms.erm.TestedLogisticRegression` actually adds (discrete Laplace on its
  grid, with its rigorously rounded-up ``a``), from exact samples (insecure seeded RNG).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..mechanisms.erm import TestedLogisticRegression, error_noise_percentile
from ..progress import Reporter
from ..samplers import SeededRandom, discrete_laplace
from . import Figure, require_matplotlib

EPSILONS2 = ["0.1", "0.25", "0.5", "1"]
DIM = 30


def _sizes(quick: bool) -> tuple[list[int], list[int]]:
    line = sorted({int(round(10 ** e)) for e in np.linspace(2, 5, 61)})
    markers = [100, 1000, 10000, 100000] if not quick else [100, 10000]
    return line, markers


def empirical_percentile(epsilon2: str, n: int, samples: int, rng: Any) -> float:
    n_train = round(0.7 * n)
    mech = TestedLogisticRegression(epsilon1="1", epsilon2=epsilon2, threshold=0,
                                    regularization=1, n_train=n_train, n_test=n - n_train,
                                    dim=DIM)
    g = float(mech.test_granularity)
    draws = [g * discrete_laplace(mech.test_scale, rng) for _ in range(samples)]
    return float(np.quantile(draws, 0.95))


def render(path: str, options: dict[str, Any]) -> dict[str, Any]:
    quick = bool(options.get("quick"))
    seed = options.get("seed")
    seed = 0 if seed is None else int(seed)
    samples = 1000 if quick else 4000
    line, markers = _sizes(quick)
    rng = SeededRandom(seed)
    curves = {e: [error_noise_percentile(e, n) for n in line] for e in EPSILONS2}
    empirical = {}
    with Reporter(options.get("progress"), len(EPSILONS2), "figure 2: sampling",
                  unit="curve") as bar:
        for e in EPSILONS2:
            empirical[e] = [empirical_percentile(e, n, samples, rng) for n in markers]
            bar.advance()
    plt = require_matplotlib()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red"]
    for e, color in zip(EPSILONS2, colors):
        ax.plot(line, curves[e], "-", color=color, label=f"ε₂ = {e}")
        ax.plot(markers, empirical[e], "o", color=color, markersize=5, markerfacecolor="none")
    ax.plot([], [], "o", color="gray", markerfacecolor="none",
            label=f"sampled (mechanism's grid noise, {samples} draws)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("database size n (70% train, 30% test)")
    ax.set_ylabel("95th percentile of the test noise")
    ax.set_title("LogRegWithTest (Alg. 5): test noise, Λ = 1")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return {"regularization": 1, "train_fraction": "0.7", "sizes": line, "percentile": curves,
            "sampled_sizes": markers, "sampled_percentile": empirical, "samples": samples,
            "seed": seed}


FIGURES = {
    "2": Figure("2", "LogRegWithTest: 95th percentile of the test noise "
                     "(Hartmann et al. 2022, Fig. 2)", render, seconds=(10.0, 3.0)),
}
