"""``odp figure optdel``: the gap between Lemma 11 (Eq. (4)) and Thm. 15 (Hartmann et al. 2022,
Sec. 5.2).

Left: ``Eq. (4) / OptDel`` (rigorous lower bound of the ratio) against the number ``n`` of evenly
spaced stopping points, for costs chosen by Lemma 11 with total delta 1e-6 split equally.  Right:
the share of the last cost ``E(P_n)`` that Thm. 15 gives back at the same total delta
(:mod:`odp.optdel.gap`).
"""

from __future__ import annotations

from typing import Any

from ..progress import Reporter
from . import Figure, require_matplotlib

FULL = (("0.01", "0.1", "0.5"), ("0", "1e-10"), (1000,), (1, 2, 5, 10, 20))
QUICK = (("0.1",), ("0", "1e-10"), (100,), (1, 2, 5, 10))


def render(output: str, options: dict[str, Any]) -> dict[str, Any]:
    from ..optdel.gap import gap_study

    plt = require_matplotlib()
    grid = QUICK if options.get("quick") else FULL
    jobs = len(grid[0]) * len(grid[1]) * len(grid[2]) * len(grid[3])
    with Reporter(options.get("progress"), jobs, "figure optdel: gap study", unit="row") as bar:
        rows = gap_study(grid, "1e-6", progress=lambda i, n: bar.advance())
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    series: dict[tuple[str, str], list] = {}
    for r in rows:
        series.setdefault((r.epsilon, r.delta_k), []).append(r)
    for (eps, dk), rs in series.items():
        ok = [r for r in rs if r.ratio is not None]
        label = f"eps_k={eps}, delta_k={dk}"
        style = "-o" if dk == "0" else "--s"
        ax1.plot([r.n for r in ok], [r.ratio for r in ok], style, label=label)
        ax2.plot(
            [r.n for r in ok],
            [100 * float(r.saving_last / r.costs[-1]) for r in ok],
            style,
            label=label,
        )
    k_n = grid[2][0]
    ax1.set_xlabel("number of stopping points n")
    ax1.set_ylabel("Eq. (4) / OptDel (lower bound)")
    ax1.set_title(f"delta of Lemma 11 over Thm. 15 (k_n={k_n})")
    ax1.axhline(1.0, color="grey", lw=0.8)
    ax2.set_xlabel("number of stopping points n")
    ax2.set_ylabel("% of the last cost E(P_n) saved")
    ax2.set_title("Thm. 15 saving at total delta 1e-6")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    ax1.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(output, dpi=120)
    plt.close(fig)
    return {"delta_total": 1e-6, "rows": [r.to_json() for r in rows]}


FIGURES = {
    "optdel": Figure(
        "optdel",
        "gap between Lemma 11 (Eq. 4) and the optimal ODP delta of Thm. 15",
        render,
        seconds=(60.0, 10.0),
    )
}
