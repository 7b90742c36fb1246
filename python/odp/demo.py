"""The end-to-end demo session behind ``odp demo``.

An analyst holds scikit-learn's bundled Wisconsin breast-cancer data (569 patients, shipped
inside the scikit-learn package: no download) and a total budget of (ε, δ) = (2, 1e-6).  They
make several releases through one accountant backed by a SQLite ledger.  Each release is
charged a posteriori (Alg. 1): ODP mechanisms that produce a cheap output class are charged
less than their worst case.  The final table compares plain DP accounting (every round at its
worst case, Lemma 4) with ODP accounting.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable

from .accountant import Accountant
from .budget import format_fraction
from .errors import BudgetExceeded, OdpError
from .mechanisms import (
    BOTTOM,
    GaussianMechanism,
    LaplaceMechanism,
    RandomizedResponse,
    ToyMechanism,
)
from .samplers import SecureRandom, SeededRandom

TOTAL_EPSILON = "2"
TOTAL_DELTA = "1e-6"


@dataclass
class DemoData:
    """Rows of (features dict, is_malignant)."""

    radius: list[float]
    texture: list[float]
    malignant: list[bool]

    def __len__(self) -> int:
        return len(self.malignant)


def load_data() -> DemoData:
    try:
        from sklearn.datasets import load_breast_cancer
    except ImportError as exc:
        raise OdpError('the demo needs scikit-learn: pip install "odp[demo]"') from exc
    bunch = load_breast_cancer()
    names = list(bunch.feature_names)
    r, t = names.index("mean radius"), names.index("mean texture")
    # sklearn encodes malignant as 0 and benign as 1
    return DemoData(
        radius=[float(row[r]) for row in bunch.data],
        texture=[float(row[t]) for row in bunch.data],
        malignant=[int(y) == 0 for y in bunch.target],
    )


def _clip(x: float, lo: float, hi: float) -> Fraction:
    return Fraction(min(max(x, lo), hi))


# Queries (neighbouring datasets differ in one patient: add or remove).
def malignant_count(d: DemoData) -> int:
    """Number of malignant tumours (sensitivity 1)."""
    return sum(d.malignant)


def radius_sum(d: DemoData) -> Fraction:
    """Sum of mean radius clipped to [0, 30] (sensitivity 30), exact."""
    return sum((_clip(x, 0, 30) for x in d.radius), Fraction(0))


def texture_sum_large(d: DemoData) -> Fraction:
    """Sum of mean texture clipped to [0, 40] over tumours with radius > 15 (sensitivity 40)."""
    return sum((_clip(t, 0, 40) for t, r in zip(d.texture, d.radius) if r > 15), Fraction(0))


def majority_malignant(d: DemoData) -> bool:
    """Are more than a third of the tumours malignant? (a yes/no question)"""
    return 3 * sum(d.malignant) > len(d)


@dataclass
class DemoStep:
    title: str
    mechanism: Any
    describe: Callable[[Any], str]


def demo_steps() -> list[DemoStep]:
    show = lambda v: "⊥ (no answer)" if v is BOTTOM else f"{float(v):.2f}"  # noqa: E731
    return [
        DemoStep("malignant count (Laplace)",
                 LaplaceMechanism(malignant_count, epsilon="0.3", sensitivity=1), show),
        DemoStep("sum of mean radius (Gaussian)",
                 GaussianMechanism(radius_sum, epsilon="0.4", delta="2e-7", sensitivity=30),
                 show),
        DemoStep("majority malignant? (randomized response)",
                 RandomizedResponse(majority_malignant, epsilon="0.2"), str),
        DemoStep("texture sum, radius>15 (M_toy: coin, then Laplace or ⊥)",
                 ToyMechanism(texture_sum_large, epsilon="0.3", sensitivity=40), show),
        DemoStep("malignant count again (M_toy)",
                 ToyMechanism(malignant_count, epsilon="0.3", sensitivity=1), show),
        DemoStep("sum of mean radius again (M_toy)",
                 ToyMechanism(radius_sum, epsilon="0.3", sensitivity=30), show),
        DemoStep("malignant count, a third look (Laplace)",
                 LaplaceMechanism(malignant_count, epsilon="0.3", sensitivity=1), show),
    ]


def run_demo(ledger: str | Path | None = None, seed: int | None = None) -> dict[str, Any]:
    """Run the demo session; returns a JSON-able report (also written to the ledger)."""
    data = load_data()
    if ledger is None:
        ledger = Path(tempfile.mkdtemp(prefix="odp-demo-")) / "ledger.db"
    ledger = Path(ledger)
    if ledger.exists():
        raise OdpError(f"{ledger} already exists; the demo writes a new ledger — choose another path")
    rng = SeededRandom(seed) if seed is not None else SecureRandom()
    rows: list[dict[str, Any]] = []
    with Accountant(epsilon=TOTAL_EPSILON, delta=TOTAL_DELTA, ledger=ledger, rng=rng) as acc:
        for step in demo_steps():
            try:
                value = acc.run(step.mechanism, data)
            except BudgetExceeded as exc:
                rows.append({"release": step.title, "mechanism": step.mechanism.name,
                             "refused": str(exc)})
                continue
            rec = acc.last_round
            rows.append({
                "release": step.title,
                "mechanism": rec.mechanism,
                "class": rec.label,
                "value": step.describe(value),
                "epsilon_worst_case": rec.sup_epsilon,
                "epsilon_charged": rec.charged,
                "epsilon_saved": rec.refund,
                "delta": rec.delta,
            })
        summary = acc.summary()
    return {
        "dataset": f"scikit-learn breast cancer (n={len(data)})",
        "budget": {"epsilon": TOTAL_EPSILON, "delta": TOTAL_DELTA},
        "rng": "insecure seeded RNG (for reproducibility)" if seed is not None else "secure (secrets)",
        "ledger": str(ledger),
        "releases": rows,
        "summary": summary,
    }


def format_report(report: dict[str, Any]) -> str:
    from .cli._common import format_table

    lines = [
        f"odp demo — {report['dataset']}, total budget ε={report['budget']['epsilon']}, "
        f"δ={report['budget']['delta']}, randomness: {report['rng']}",
        "",
    ]
    table = []
    for i, row in enumerate(report["releases"], 1):
        if "refused" in row:
            table.append([i, row["release"], "refused: over budget", "", "", ""])
            continue
        table.append([
            i, row["release"], row["value"],
            format_fraction(row["epsilon_worst_case"]),
            format_fraction(row["epsilon_charged"]),
            format_fraction(row["epsilon_saved"]),
        ])
    lines.append(format_table(
        ["#", "release", "value", "ε worst case (DP)", "ε charged (ODP)", "ε saved"], table))
    s = report["summary"]
    worst, charged = Fraction(s["epsilon_worst_case"]), Fraction(s["epsilon_charged"])
    lines += [
        "",
        f"plain DP accounting would have charged ε={format_fraction(worst)}; "
        f"ODP accounting charged ε={format_fraction(charged)} "
        f"(saved ε={format_fraction(worst - charged)}), δ={format_fraction(Fraction(s['delta_charged']))}.",
        f"remaining budget: ε={format_fraction(Fraction(s['remaining']['epsilon']))}, "
        f"δ={format_fraction(Fraction(s['remaining']['delta']))}",
        f"ledger written to {report['ledger']}  (inspect: odp ledger show {report['ledger']})",
    ]
    return "\n".join(lines)
