"""The end-to-end analyst session behind ``odp demo`` (paper 002, Secs. 4–6).

An analyst holds scikit-learn's bundled Wisconsin breast-cancer data (569 patients, shipped
inside the scikit-learn package: no download) and a total budget of (ε, δ) = (6, 1e-5).  Two
databases are neighbours when one patient's record is replaced (the patient count is public).
Through one accountant backed by a SQLite ledger they make, in order:

1. a count (Laplace) — plain DP, charged its worst case;
2. a sparse-vector release (Sec. 4.1): SVT finds the histogram bins of "mean radius" with at
   least 40 patients (Lemma 8: charged ε1 + (c'/c)·ε2), then each selected count is released
   with the budget left over, split over the bins actually found;
3. the interquartile range then the median of "mean radius" (Sec. 4.2): M_IQR is charged 2ε1
   instead of 3ε1 when it returns ⊥ (Lemma 10), and the median then gets ε1 + ε2;
4. noisy gradient descent for logistic regression that stops when its noisy gradient is small
   (Sec. 5, Lemma 11): charged only the steps it ran;
5. a logistic-regression model released only if it passes a DP test of its error on a held-out
   30% (Sec. 6, Alg. 5, Cor. 18): a model that fails is charged ε2 instead of ε1.

The final table compares each round's worst case (plain DP accounting, Lemma 4) with its ODP
charge; the run is exported as a certificate and verified by the checker generated from the
Lean rules.  Feature scaling uses the per-feature ranges published in the data set's
description (public information, not computed from the records).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .accountant import Accountant
from .budget import format_fraction
from .errors import BudgetExceeded, OdpError
from .mechanisms import BOTTOM, LaplaceMechanism
from .mechanisms.erm import TestedLogisticRegression
from .mechanisms.iterative import NoisyGradientDescent
from .mechanisms.ptr import iqr_then_median
from .mechanisms.svt import sparse_vector_release, svt_split
from .samplers import SecureRandom, SeededRandom

TOTAL_EPSILON = "6"
TOTAL_DELTA = "1e-5"

#: public per-feature ranges from the data set's published summary statistics (DESCR)
PUBLIC_RANGES = {
    "mean radius": (6.981, 28.11),
    "mean texture": (9.71, 39.28),
    "mean concave points": (0.0, 0.201),
    "worst area": (185.2, 4254.0),
}
RADIUS_BINS = list(range(6, 31, 2))  # histogram bin edges of "mean radius" (public)


@dataclass
class DemoData:
    """Patients' records: the radius column, the model features and labels (+1 malignant)."""

    radius: list[float]
    features: np.ndarray
    labels: np.ndarray

    def __len__(self) -> int:
        return len(self.labels)


def load_data() -> DemoData:
    try:
        from sklearn.datasets import load_breast_cancer
    except ImportError as exc:
        raise OdpError('the demo needs scikit-learn: pip install "odp[demo]"') from exc
    bunch = load_breast_cancer()
    names = list(bunch.feature_names)
    cols = [names.index(k) for k in PUBLIC_RANGES]
    lo = np.array([v[0] for v in PUBLIC_RANGES.values()])
    hi = np.array([v[1] for v in PUBLIC_RANGES.values()])
    scaled = (bunch.data[:, cols] - (lo + hi) / 2) / ((hi - lo) / 2)  # public ranges → [−1, 1]
    features = np.hstack([scaled, np.ones((len(scaled), 1))])  # and an intercept
    labels = np.where(bunch.target == 0, 1.0, -1.0)  # sklearn: 0 = malignant
    return DemoData([float(v) for v in bunch.data[:, names.index("mean radius")]], features,
                    labels)


def malignant_count(d: DemoData) -> int:
    """Number of malignant tumours (sensitivity 1)."""
    return int(np.sum(d.labels > 0))


def _bin_count(lo: int, hi: int) -> Callable[[DemoData], int]:
    def count(d: DemoData) -> int:
        return sum(1 for r in d.radius if lo <= r < hi)
    count.__name__ = f"radius_in_[{lo},{hi})"
    return count


def _split(n: int) -> tuple[np.ndarray, np.ndarray]:
    """A fixed public 70/30 permutation of the record positions."""
    perm = np.random.RandomState(2022).permutation(n)
    cut = int(round(0.7 * n))
    return perm[:cut], perm[cut:]


def _show(value: Any) -> str:
    if value is BOTTOM:
        return "⊥ (withheld)"
    if isinstance(value, Fraction):
        return f"{float(value):.2f}"
    return str(value)


def run_session(acc: Accountant, data: DemoData) -> dict[str, dict[str, Any]]:
    """The analyst's releases; returns ``{round_id: {"release": title, "value": text}}`` and
    appends refusals under keys ``"refused-<i>"``."""
    notes: dict[str, dict[str, Any]] = {}

    def note(title: str, value: Any, record: Any = None) -> None:
        rec = record if record is not None else acc.last_round
        notes[rec.round_id] = {"release": title, "value": _show(value)}

    def refused(title: str, exc: BudgetExceeded) -> None:
        notes[f"refused-{len(notes)}"] = {"release": title, "refused": str(exc)}

    # 1. a plain DP count
    try:
        value = acc.run(LaplaceMechanism(malignant_count, epsilon="0.1"), data)
        note("malignant count (Laplace)", value)
    except BudgetExceeded as exc:
        refused("malignant count (Laplace)", exc)

    # 2. sparse-vector release of the large histogram bins (Sec. 4.1)
    edges = RADIUS_BINS
    entries = [_bin_count(a, b) for a, b in zip(edges, edges[1:])]
    labels = [f"[{a},{b})" for a, b in zip(edges, edges[1:])]
    eps1, eps2 = svt_split("1", 8)

    def note_svt(out: Any) -> None:
        note(f"SVT: radius bins with ≥ 40 patients (c = 8, found c' = {out.count})",
             ", ".join(labels[i] for i in out.selected) or "none", out.svt_round)
        for i, rec in zip(out.values, out.entry_rounds):  # the entries released (in order)
            note(f"  count in radius bin {labels[i]} (Laplace, leftover split over c')",
                 out.values[i], rec)

    try:
        note_svt(sparse_vector_release(acc, data, entries, 40, c=8, epsilon1=eps1,
                                       epsilon2=eps2, epsilon3="0.6", names=labels))
    except BudgetExceeded as exc:
        partial = getattr(exc, "partial", None)  # rounds made before a later refusal
        if partial is not None:
            note_svt(partial)
        refused("SVT sparse-vector release", exc)

    # 3. IQR then median of mean radius (Sec. 4.2)
    def note_iqr(res: Any) -> None:
        iqr_text = res.iqr if res.iqr is BOTTOM else f"{res.iqr.value:.2f}"
        note("IQR of mean radius (M_IQR, PTR)", iqr_text, res.iqr_round)
        if res.complete:
            note(f"median of mean radius (ε = {format_fraction(res.median_epsilon)})",
                 res.median, res.median_round)

    try:
        note_iqr(iqr_then_median(acc, data.radius, epsilon_iqr="0.2", delta_iqr="1e-6",
                                 epsilon_median="0.3", lower=6, upper=30, candidates=2401))
    except BudgetExceeded as exc:
        partial = getattr(exc, "partial", None)  # the IQR round, if the median was refused
        if partial is not None:
            note_iqr(partial)
        refused("IQR then median", exc)

    # 4. early-stopped noisy gradient descent (Sec. 5)
    # stop when the norm of the mean of the last 10 noisy gradients is within 20% of what the
    # noise alone would give (a public, data-independent threshold)
    n, dim = data.features.shape
    settings = dict(n=n, dim=dim, epsilon_step="0.05", stops=[10, 20, 30, 40],
                    learning_rate=4.0, regularization=1e-3, window=10)
    noise = NoisyGradientDescent(**settings).noise_norm() / np.sqrt(10)
    gd = NoisyGradientDescent(**settings, stop_threshold=1.2 * noise)
    try:
        fit = acc.run(gd, (data.features, data.labels))
        accuracy = float(np.mean(np.sign(data.features @ fit.weights) == data.labels))
        note("logistic regression by noisy gradient descent (early stopping)",
             f"stopped after {len(fit)} of 40 steps; training accuracy {accuracy:.1%}")
    except BudgetExceeded as exc:
        refused("noisy gradient descent", exc)

    # 5. a tested model (Sec. 6)
    train, test = _split(n)
    model = TestedLogisticRegression(epsilon1="1", epsilon2="0.25", threshold="0.8",
                                     regularization="0.5", n_train=len(train),
                                     n_test=len(test), dim=dim)
    try:
        released = acc.run(model, (data.features[train], data.labels[train],
                                   data.features[test], data.labels[test]))
        if released is BOTTOM:
            text = BOTTOM
        else:
            acc_test = float(np.mean(np.sign(data.features[test] @ released.weights)
                                     == data.labels[test]))
            text = f"released; test accuracy {acc_test:.1%}"
        note("logistic regression, released only if its test error ≤ 0.8 (Alg. 5)", text)
    except BudgetExceeded as exc:
        refused("tested logistic regression", exc)
    return notes


def run_demo(ledger: str | Path | None = None, seed: int | None = None) -> dict[str, Any]:
    """Run the demo session; returns a JSON-able report (the ledger and a certificate are
    written next to each other)."""
    data = load_data()
    if ledger is None:
        ledger = Path(tempfile.mkdtemp(prefix="odp-demo-")) / "ledger.db"
    ledger = Path(ledger)
    if ledger.exists():
        raise OdpError(
            f"{ledger} already exists; the demo writes a new ledger — choose another path")
    rng = SeededRandom(seed) if seed is not None else SecureRandom()
    with Accountant(epsilon=TOTAL_EPSILON, delta=TOTAL_DELTA, ledger=ledger, rng=rng) as acc:
        notes = run_session(acc, data)
        rows: list[dict[str, Any]] = []
        for rec in acc.history:
            info = notes.get(rec.round_id, {"release": rec.mechanism, "value": ""})
            rows.append({
                "release": info["release"],
                "mechanism": rec.mechanism,
                "class": rec.label,
                "value": info["value"],
                "epsilon_worst_case": rec.sup_epsilon,
                "epsilon_charged": rec.charged,
                "epsilon_saved": rec.refund,
                "delta": rec.delta,
            })
        rows += [dict(v) for k, v in notes.items() if k.startswith("refused-")]
        summary = acc.summary()
        certificate = _certificate(acc, ledger)
    return {
        "dataset": f"scikit-learn breast cancer (n={len(data)})",
        "budget": {"epsilon": TOTAL_EPSILON, "delta": TOTAL_DELTA},
        "rng": ("insecure seeded RNG (for reproducibility)" if seed is not None
                else "secure (secrets)"),
        "ledger": str(ledger),
        "releases": rows,
        "summary": summary,
        "certificate": certificate,
    }


def _certificate(acc: Accountant, ledger: Path) -> dict[str, Any]:
    """Export the run as a certificate next to the ledger and verify it with the checker
    generated from the Lean rules."""
    from .certs.verify import verify_file

    path = ledger.with_name(ledger.name + ".cert")
    cert = acc.certificate()
    text_path, sidecar = cert.write(path)
    result = verify_file(text_path)
    return {"path": str(text_path), "sidecar": str(sidecar), "verified": result.ok,
            "message": result.message}


def _short(x: Any) -> str:
    """Exact decimal when it is short, else ``≈`` and 4 decimals (display only)."""
    x = Fraction(x)
    text = format_fraction(x)
    return text if "/" not in text and len(text) <= 12 else f"≈{float(x):.4f}"


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
            _short(row["epsilon_worst_case"]),
            _short(row["epsilon_charged"]),
            _short(row["epsilon_saved"]),
        ])
    lines.append(format_table(
        ["#", "release", "value", "ε worst case (DP)", "ε charged (ODP)", "ε saved"], table))
    s = report["summary"]
    worst, charged = Fraction(s["epsilon_worst_case"]), Fraction(s["epsilon_charged"])
    total = Fraction(report["budget"]["epsilon"])
    cert = report["certificate"]
    over = (f" — more than the budget of {format_fraction(total)}: with plain DP accounting "
            "these same releases would not all have fit" if worst > total else "")
    lines += [
        "",
        f"sum of the rounds' worst cases (plain DP accounting): ε={_short(worst)}{over}.",
        f"ODP accounting charged ε={_short(charged)} (saved ε={_short(worst - charged)}), "
        f"δ={format_fraction(Fraction(s['delta_charged']))}.",
        "(The exact charges are in the ledger and in --json; ≈ marks a rounded display.)",
        f"remaining budget: ε={format_fraction(Fraction(s['remaining']['epsilon']))}, "
        f"δ={format_fraction(Fraction(s['remaining']['delta']))}",
        f"certificate written to {cert['path']} — "
        + ("verified by the checker generated from the Lean rules"
           if cert["verified"] else f"NOT verified: {cert['message']}"),
        f"ledger written to {report['ledger']}  (inspect: odp ledger show {report['ledger']})",
    ]
    return "\n".join(lines)
