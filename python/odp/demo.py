"""The end-to-end analyst session behind ``odp demo`` (Hartmann et al. 2022, Secs. 4–6).

**The data.**  By default the analyst holds a *synthetic cohort* of 20,000 patient records
(``--records N``), four tumour features and a diagnosis each, drawn with a fixed public seed from
a per-diagnosis Gaussian model whose class ratio, means and covariances are those of
scikit-learn's bundled Wisconsin breast-cancer data (569 real patients, shipped inside the
scikit-learn package: no download); each feature is clipped to the range published in the data
set's description.  The synthetic records are the individuals this run protects; the 569 real
patients' summary statistics, used to build the model, are not protected by it.  Why synthetic:
Propose-Test-Release (M_IQR) only answers when the IQR is stable under ~ln(1/δ)/ε replaced
records, which 569 records never are, and the tested model needs enough data to pass its DP test;
on the real 569 patients (``--real``) both are withheld (⊥) in essentially every run, so the demo
would never show them *release*.

Two databases are neighbours when one record is replaced (the record count is public).  With a
total budget of (ε, δ) = (6, 1e-5) through one accountant backed by a SQLite ledger the analyst
makes, in order:

1. a count (Laplace) — plain DP, charged its worst case;
2. a sparse-vector release (Sec. 4.1): SVT finds the histogram bins of "mean radius" holding at
   least 5% of the records (Lemma 8: charged ε1 + (c'/c)·ε2), then each selected count is
   released with the budget left over, split over the bins actually found;
3. the interquartile range then the median of "mean radius" (Sec. 4.2): M_IQR is charged 3ε1
   when it releases and 2ε1 when it returns ⊥ (Lemma 10); the median then gets ε2, or ε1 + ε2
   after a ⊥;
4. noisy gradient descent for logistic regression that stops when its noisy gradient is small
   (Sec. 5, Lemma 11): charged only the steps it ran;
5. a logistic-regression model released only if it passes a DP test of its error on a held-out
   30% (Sec. 6, Alg. 5, Cor. 18): a model that fails is charged ε2 instead of ε1;
6. logistic regression by DP-SGD (:class:`odp.mechanisms.DPSGD`: Poisson sampling, exact
   discrete Gaussian noise on a grid) that stops at the end of an epoch when its epoch-mean noisy
   gradient is small (Sec. 5, Lemma 11 with RDP as COMP): charged the epochs it ran.  DP-SGD is
   analysed for add/remove neighbours; the round converts that to the session's replace-one
   neighbours by group privacy (:class:`odp.composition.ReplaceOneComposition`).

The final table (100 columns) shows each release beside the true statistic on the records
(for a model: the accuracy of the same model fitted without noise; computed only to compare,
never released) and compares each round's worst case (plain DP accounting) with its ODP
charge; the last lines summarise "ε X of Y" per mechanism, and the run is exported as a
certificate verified by the checker generated from the Lean rules.  Feature
scaling uses the published per-feature ranges (public information, not computed from records).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable

import numpy as np

from .accountant import Accountant
from .budget import display_fraction, display_named, format_fraction
from .errors import BudgetExceeded, InvalidParameter, OdpError
from .ledger import RoundRecord
from .mechanisms import BOTTOM, LaplaceMechanism
from .mechanisms.dpsgd import DPSGD, LogisticRegressionModel
from .mechanisms.erm import TestedLogisticRegression
from .mechanisms.iterative import NoisyGradientDescent
from .mechanisms.ptr import iqr_of, iqr_then_median
from .mechanisms.svt import sparse_vector_release, svt_split
from .limits import Estimate
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

#: size of the default synthetic cohort, the fixed public seed it is drawn with, and the bounds
#: on --records (below MIN_RECORDS the SVT/IQR parameters make no sense; above MAX_RECORDS the
#: demo is no longer quick: about 1 s per 10,000 records)
DEFAULT_RECORDS = 20_000
SYNTHETIC_SEED = 569
MIN_RECORDS = 100
MAX_RECORDS = 1_000_000
SECONDS_PER_RECORD = 1e-4
BYTES_PER_RECORD = 2_000


@dataclass
class DemoData:
    """Records: the radius column, the model features and labels (+1 malignant)."""

    radius: list[float]
    features: np.ndarray
    labels: np.ndarray
    description: str = ""

    def __len__(self) -> int:
        return len(self.labels)


def _real_records() -> tuple[np.ndarray, np.ndarray]:
    """The four features and the diagnosis (+1 malignant) of the 569 real patients."""
    from .extras import require

    datasets = require("sklearn.datasets", "the demo's bundled data (odp demo)")
    bunch = datasets.load_breast_cancer()
    names = list(bunch.feature_names)
    cols = [names.index(k) for k in PUBLIC_RANGES]
    labels = np.where(bunch.target == 0, 1.0, -1.0)  # sklearn: 0 = malignant
    return bunch.data[:, cols], labels


def synthetic_records(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` synthetic records from the per-diagnosis Gaussian model of the module docstring:
    the real data's class ratio (rounded), means and covariances; features clipped to
    :data:`PUBLIC_RANGES`; drawn with the public seed :data:`SYNTHETIC_SEED`."""
    x, y = _real_records()
    rng = np.random.default_rng(SYNTHETIC_SEED)
    malignant = int(round(n * float(np.mean(y > 0))))
    parts, labels = [], []
    for label, count in ((1.0, malignant), (-1.0, n - malignant)):
        rows = x[y == label]
        parts.append(rng.multivariate_normal(rows.mean(axis=0), np.cov(rows, rowvar=False),
                                             size=count))
        labels.append(np.full(count, label))
    features = np.vstack(parts)
    lo = np.array([v[0] for v in PUBLIC_RANGES.values()])
    hi = np.array([v[1] for v in PUBLIC_RANGES.values()])
    features = np.clip(features, lo, hi)
    order = rng.permutation(n)  # interleave the classes (record order is not meaningful)
    return features[order], np.concatenate(labels)[order]


def load_data(records: int | None = DEFAULT_RECORDS) -> DemoData:
    """The demo's data: ``records`` synthetic records (module docstring), or the 569 real
    patients of scikit-learn's bundled Wisconsin data when ``records`` is ``None``."""
    if records is None:
        raw, labels = _real_records()
        description = "scikit-learn's Wisconsin breast-cancer data (569 real patients)"
    else:
        if isinstance(records, bool) or not isinstance(records, int) or \
                not MIN_RECORDS <= records <= MAX_RECORDS:
            raise InvalidParameter(f"records must be an integer in [{MIN_RECORDS}, "
                                   f"{MAX_RECORDS}], got {records!r}")
        raw, labels = synthetic_records(records)
        description = (f"synthetic cohort of {records} records drawn from a per-diagnosis "
                       "Gaussian model of scikit-learn's Wisconsin breast-cancer data "
                       "(569 patients)")
    lo = np.array([v[0] for v in PUBLIC_RANGES.values()])
    hi = np.array([v[1] for v in PUBLIC_RANGES.values()])
    scaled = (raw - (lo + hi) / 2) / ((hi - lo) / 2)  # public ranges → [−1, 1]
    features = np.hstack([scaled, np.ones((len(scaled), 1))])  # and an intercept
    return DemoData([float(v) for v in raw[:, 0]], features, labels, description)


def estimate(records: int | None = DEFAULT_RECORDS) -> Estimate:
    """Estimated time and memory of :func:`run_demo` (an :class:`odp.limits.Estimate`)."""
    from .limits import Estimate

    n = 569 if records is None else int(records)
    return Estimate(f"the demo on {n} records", 1.0 + SECONDS_PER_RECORD * n,
                    100 * 2**20 + BYTES_PER_RECORD * n, knobs="--records")


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
    if isinstance(value, Fraction) and value.denominator != 1:
        return f"{float(value):.2f}"
    return str(value)


def _bins_text(bins: list[str]) -> str:
    """Histogram bins ``[a,b)`` in order, adjacent ones merged: ``[8,22)``; ``none``."""
    spans: list[list[str]] = []
    for text in bins:
        lo, hi = text[1:-1].split(",")
        if spans and spans[-1][1] == lo:
            spans[-1][1] = hi
        else:
            spans.append([lo, hi])
    return " ".join(f"[{lo},{hi})" for lo, hi in spans) or "none"


def _nonprivate_accuracy(x_fit: np.ndarray, y_fit: np.ndarray, x_eval: np.ndarray | None = None,
                         y_eval: np.ndarray | None = None) -> float:
    """The accuracy (on ``x_eval``, default the fitting data) of logistic regression fitted
    *without* noise (500 full-batch gradient steps): the true statistic a DP model is compared
    with in the report.  Not a release: nothing here is private."""
    w = np.zeros(x_fit.shape[1])
    for _ in range(500):
        coef = np.exp(-np.logaddexp(0.0, y_fit * (x_fit @ w)))  # 1 / (1 + e^{y·wᵀx})
        w -= 4.0 * (-(x_fit.T @ (y_fit * coef)) / len(y_fit) + 1e-3 * w)
    xe, ye = (x_fit, y_fit) if x_eval is None or y_eval is None else (x_eval, y_eval)
    return float(np.mean(np.sign(xe @ w) == ye))


@dataclass(frozen=True)
class Plan:
    """The analyst's parameters (public, chosen before seeing the data).

    ``svt_share``: SVT looks for radius bins holding at least this share of the records;
    ``iqr``: (ε1, δ1) of M_IQR and ε2 of the median; ``gd_*``: the early-stopped gradient
    descent; ``model_*``: the tested logistic regression (ε1, ε2, error threshold t,
    regularisation Λ); ``dpsgd_*``: the DP-SGD round (noise multiplier σ, sampling rate q, at
    most ``dpsgd_epochs`` epochs, δ, learning rate, stopping tolerance on the epoch-mean noisy
    gradient).  :data:`DEFAULT_PLAN` is tuned so that on the default synthetic cohort every
    mechanism releases in most runs (``tests/test_demo.py`` checks 20 seeds)."""

    svt_share: Fraction = Fraction(1, 20)
    epsilon_iqr: str = "0.2"
    delta_iqr: str = "1e-6"
    epsilon_median: str = "0.3"
    gd_epsilon_step: str = "0.05"
    gd_learning_rate: float = 4.0
    gd_tolerance: float = 0.03
    model_epsilon1: str = "1"
    model_epsilon2: str = "0.25"
    model_threshold: str = "0.7"
    model_regularization: str = "0.01"
    dpsgd_noise_multiplier: str = "5"
    dpsgd_sampling_rate: str = "1/100"
    dpsgd_epochs: int = 3
    dpsgd_delta: str = "3e-6"
    dpsgd_learning_rate: float = 4.0
    dpsgd_tolerance: float = 0.03


DEFAULT_PLAN = Plan()

#: the plan of the original demo on the 569 real patients (``--real``): M_IQR and the tested
#: model are withheld (⊥) in essentially every run at this size
REAL_DATA_PLAN = Plan(svt_share=Fraction(40, 569), model_threshold="0.8",
                      model_regularization="0.5", gd_tolerance=0.0)


def run_session(acc: Accountant, data: DemoData, plan: Plan = DEFAULT_PLAN,
                progress: Any = None) -> dict[str, dict[str, Any]]:
    """The analyst's releases; returns ``{round_id: {"release": title, "value": text}}`` and
    appends refusals under keys ``"refused-<i>"``."""
    from .progress import Reporter

    with Reporter(progress, 6, "odp demo", unit="release") as bar:
        return _session(acc, data, plan, bar.advance)


def _session(acc: Accountant, data: DemoData, plan: Plan,
             step: Callable[[], None]) -> dict[str, dict[str, Any]]:
    notes: dict[str, dict[str, Any]] = {}
    threshold = int(plan.svt_share * len(data))

    def note(title: str, value: Any, record: Any = None, *, true: Any = "",
             detail: str = "") -> None:
        """A round's row: its title, the released value and, beside it, the true statistic
        on the records (computed here only to compare: it is not released)."""
        rec = record if record is not None else acc.last_round
        assert rec is not None  # every note follows a round
        notes[rec.round_id] = {"release": title, "value": _show(value), "true": _show(true)}
        if detail:
            notes[rec.round_id]["detail"] = detail

    def refused(title: str, exc: BudgetExceeded) -> None:
        notes[f"refused-{len(notes)}"] = {"release": title, "refused": str(exc)}

    # 1. a plain DP count
    try:
        value = acc.run(LaplaceMechanism(malignant_count, epsilon="0.1"), data)
        note("malignant count (Laplace)", value, true=malignant_count(data))
    except BudgetExceeded as exc:
        refused("malignant count (Laplace)", exc)

    step()

    # 2. sparse-vector release of the large histogram bins (Sec. 4.1)
    edges = RADIUS_BINS
    entries = [_bin_count(a, b) for a, b in zip(edges, edges[1:])]
    labels = [f"[{a},{b})" for a, b in zip(edges, edges[1:])]
    eps1, eps2 = svt_split("1", 8)

    truly_large = [i for i, count in enumerate(entries) if count(data) >= threshold]

    def note_svt(out: Any) -> None:
        found = [labels[i] for i in out.selected]
        note(f"SVT: bins with ≥ {threshold} records", _bins_text(found), out.svt_round,
             true=_bins_text([labels[i] for i in truly_large]),
             detail=f"radius bins [a,b) holding at least {threshold} records (c = 8, found "
                    f"c' = {out.count}): {', '.join(found) or 'none'}")
        for i, rec in zip(out.values, out.entry_rounds):  # the entries released (in order)
            note(f"  count in radius bin {labels[i]}", out.values[i], rec,
                 true=entries[i](data), detail="Laplace, the leftover ε3 split over c'")

    try:
        note_svt(sparse_vector_release(acc, data, entries, threshold, c=8, epsilon1=eps1,
                                       epsilon2=eps2, epsilon3="0.6", names=labels))
    except BudgetExceeded as exc:
        partial = getattr(exc, "partial", None)  # rounds made before a later refusal
        if partial is not None:
            note_svt(partial)
        refused("SVT sparse-vector release", exc)

    step()

    # 3. IQR then median of mean radius (Sec. 4.2)
    def note_iqr(res: Any) -> None:
        iqr_text = res.iqr if res.iqr is BOTTOM else f"{res.iqr.value:.2f}"
        note("IQR of mean radius (PTR)", iqr_text, res.iqr_round, true=iqr_of(radius),
             detail="M_IQR (Dwork and Lei's Propose-Test-Release)")
        if res.complete:
            note("median of mean radius", res.median, res.median_round,
                 true=radius[(len(radius) - 1) // 2],
                 detail=f"exponential mechanism, ε = {format_fraction(res.median_epsilon)}")

    try:
        # the IQR and the median are symmetric functions of the records: hand them the values
        # already sorted and exact (floats sort exactly; sorting Fractions is 100x slower)
        radius = [Fraction(v) for v in sorted(data.radius)]
        note_iqr(iqr_then_median(acc, radius, epsilon_iqr=plan.epsilon_iqr,
                                 delta_iqr=plan.delta_iqr, epsilon_median=plan.epsilon_median,
                                 lower=6, upper=30, candidates=2401))
    except BudgetExceeded as exc:
        partial = getattr(exc, "partial", None)  # the IQR round, if the median was refused
        if partial is not None:
            note_iqr(partial)
        refused("IQR then median", exc)

    step()

    # 4. early-stopped noisy gradient descent (Sec. 5)
    # stop when the norm of the mean of the last 10 noisy gradients is below a public tolerance
    # (or within 20% of what the noise alone would give, if that is larger)
    n, dim = data.features.shape
    settings = dict(n=n, dim=dim, epsilon_step=plan.gd_epsilon_step, stops=[10, 20, 30, 40],
                    learning_rate=plan.gd_learning_rate, regularization=1e-3, window=10)
    noise = NoisyGradientDescent(**settings).noise_norm() / np.sqrt(10)
    gd = NoisyGradientDescent(**settings, stop_threshold=max(1.2 * noise, plan.gd_tolerance))
    try:
        fit = acc.run(gd, (data.features, data.labels))
        accuracy = float(np.mean(np.sign(data.features @ fit.weights) == data.labels))
        note(f"noisy GD, ran {len(fit)}/40 steps", f"acc. {accuracy:.1%}",
             true=f"acc. {_nonprivate_accuracy(data.features, data.labels):.1%}",
             detail=f"logistic regression by noisy gradient descent (early stopping): stopped "
                    f"after {len(fit)} of 40 steps; training accuracy {accuracy:.1%}")
    except BudgetExceeded as exc:
        refused("noisy gradient descent", exc)

    step()

    # 5. a tested model (Sec. 6)
    train, test = _split(n)
    model = TestedLogisticRegression(epsilon1=plan.model_epsilon1,
                                     epsilon2=plan.model_epsilon2,
                                     threshold=plan.model_threshold,
                                     regularization=plan.model_regularization,
                                     n_train=len(train),
                                     n_test=len(test), dim=dim)
    try:
        released = acc.run(model, (data.features[train], data.labels[train],
                                   data.features[test], data.labels[test]))
        if released is BOTTOM:
            text: Any = BOTTOM
        else:
            acc_test = float(np.mean(np.sign(data.features[test] @ released.weights)
                                     == data.labels[test]))
            text = f"test acc. {acc_test:.1%}"
        baseline = _nonprivate_accuracy(data.features[train], data.labels[train],
                                        data.features[test], data.labels[test])
        note(f"tested model (error ≤ {plan.model_threshold})", text,
             true=f"test acc. {baseline:.1%}",
             detail=f"logistic regression, released only if its test error ≤ "
                    f"{plan.model_threshold} (Alg. 5)")
    except BudgetExceeded as exc:
        refused("tested logistic regression", exc)
    step()

    # 6. DP-SGD with early stopping at epoch ends (Sec. 5, Lemma 11 with RDP as COMP)
    sgd = DPSGD(LogisticRegressionModel(dim, fit_intercept=False), n=n,
                sampling_rate=plan.dpsgd_sampling_rate,
                noise_multiplier=plan.dpsgd_noise_multiplier, epochs=plan.dpsgd_epochs,
                delta=plan.dpsgd_delta, learning_rate=plan.dpsgd_learning_rate,
                neighbours="replace-one", progress=False,
                stop_threshold=plan.dpsgd_tolerance)
    try:
        fit_sgd = acc.run(sgd, (data.features, data.labels))
        epochs = len(fit_sgd) // sgd.steps_per_epoch
        accuracy = fit_sgd.accuracy(data.features, data.labels)
        note(f"DP-SGD, ran {epochs}/{plan.dpsgd_epochs} epochs", f"acc. {accuracy:.1%}",
             true=f"acc. {_nonprivate_accuracy(data.features, data.labels):.1%}",
             detail=f"logistic regression by DP-SGD (q = {plan.dpsgd_sampling_rate}, "
                    f"σ = {plan.dpsgd_noise_multiplier}; early stopping at epoch ends): "
                    f"stopped after {epochs} of {plan.dpsgd_epochs} epochs; training "
                    f"accuracy {accuracy:.1%}")
    except BudgetExceeded as exc:
        refused("DP-SGD", exc)
    step()
    return notes


def run_demo(ledger: str | Path | None = None, seed: int | None = None, *,
             records: int | None = DEFAULT_RECORDS, plan: Plan | None = None,
             limits: Any = None, progress: Any = None) -> dict[str, Any]:
    """Run the demo session; returns a JSON-able report (the ledger and a certificate are
    written next to each other).  ``records=None`` uses the 569 real patients (with the plan of
    the original demo, under which M_IQR and the tested model are withheld).  The run is
    estimated first (:func:`estimate`, refused above ``limits``); ``progress`` shows one step
    per release (:mod:`odp.progress`)."""
    from .limits import Limits

    if records is not None and (isinstance(records, bool) or not isinstance(records, int)
                                or not MIN_RECORDS <= records <= MAX_RECORDS):
        raise InvalidParameter(f"records must be an integer in [{MIN_RECORDS}, "
                               f"{MAX_RECORDS}], got {records!r}")
    (limits if limits is not None else Limits()).check(estimate(records))
    if ledger is None:
        ledger = Path(tempfile.mkdtemp(prefix="odp-demo-")) / "ledger.db"
    ledger = Path(ledger)
    if ledger.exists():
        raise OdpError(
            f"{ledger} already exists; the demo writes a new ledger — choose another path")
    if not ledger.parent.is_dir():
        raise InvalidParameter(f"the directory {ledger.parent} of the ledger does not exist")
    data = load_data(records)
    if plan is None:
        plan = DEFAULT_PLAN if records is not None else REAL_DATA_PLAN
    rng = SeededRandom(seed) if seed is not None else SecureRandom()
    with Accountant(epsilon=TOTAL_EPSILON, delta=TOTAL_DELTA, ledger=ledger, rng=rng) as acc:
        notes = run_session(acc, data, plan, progress=progress)
        rows: list[dict[str, Any]] = []
        for rec in acc.history:
            info = notes.get(rec.round_id, {"release": rec.mechanism, "value": ""})
            rows.append({
                "release": info["release"],
                "mechanism": rec.mechanism,
                "class": rec.label,
                "value": info["value"],
                "true": info.get("true", ""),
                "detail": info.get("detail", ""),
                "epsilon_worst_case": rec.sup_epsilon,
                "epsilon_charged": rec.charged,
                "epsilon_saved": rec.refund,
                "delta": rec.delta,
            })
        rows += [dict(v) for k, v in notes.items() if k.startswith("refused-")]
        summary = acc.summary()
        per_mechanism = mechanism_summary(acc.history)
        lanes = [status.to_json() for status in acc.lanes]
        spent = acc.spent.to_json()
        certificate = _certificate(acc, ledger)
    return {
        "dataset": data.description,
        "records": len(data),
        "budget": {"epsilon": TOTAL_EPSILON, "delta": TOTAL_DELTA},
        "rng": ("insecure seeded RNG (for reproducibility)" if seed is not None
                else "secure (secrets)"),
        "ledger": str(ledger),
        "releases": rows,
        "summary": summary,
        "per_mechanism": per_mechanism,
        "lanes": lanes,
        "session_spent": spent,
        "certificate": certificate,
    }


#: display names of the demo's mechanisms, in session order, and what their ODP charge means
_FAMILIES = (
    ("laplace", "Laplace count", "plain DP: its worst case"),
    ("svt", "SVT selection", "Lemma 8: ε1 + (c'/c)·ε2"),
    ("laplace[", "SVT-selected counts", "ε3 split over the c' found"),
    ("iqr", "M_IQR (PTR)", "Lemma 10: a value 3ε1, ⊥ 2ε1"),
    ("median", "median", "plain DP: ε2, or ε1+ε2 after ⊥"),
    ("noisy_gd", "noisy gradient descent", "Lemma 11: the steps it ran"),
    ("logreg_with_test", "tested model (Alg. 5)", "Cor. 18: a model ε1, ⊥ ε2"),
    ("dpsgd", "DP-SGD", "Lemma 11, RDP: the epochs run"),
)


def mechanism_summary(rounds: list[RoundRecord]) -> list[dict[str, Any]]:
    """Per mechanism: what it released, ``charged`` and ``worst_case`` ε (exact), and the
    class it fell into; the SVT-selected counts are summed into one line."""
    out = []
    for prefix, name, rule in _FAMILIES:
        mine = [r for r in rounds
                if (r.mechanism.startswith(prefix) if prefix.endswith("[")
                    else r.mechanism == prefix)]
        if not mine:
            continue
        charged = sum((r.epsilon_held for r in mine), Fraction(0))
        worst = sum((r.sup_epsilon for r in mine), Fraction(0))
        labels = [r.label for r in mine]
        released = all(label != "bottom" and label is not None for label in labels)
        out.append({"mechanism": name, "rule": rule, "rounds": len(mine),
                    "released": released, "classes": labels,
                    "charged": str(charged), "worst_case": str(worst)})
    return out


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


#: Width of the demo's text report (columns); every line fits (long paths aside).
REPORT_WIDTH = 100
#: Significant digits of the ε cells of the table (exact when that is enough).
TABLE_DIGITS = 4


def _short(x: Any, rounding: str = "up", digits: int | None = None) -> str:
    """Exact decimal when it is short, else rounded on the safe side and marked ``≤``/``≥``
    (:func:`odp.budget.display_fraction`; display only)."""
    return display_fraction(Fraction(x), rounding, digits=digits)


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _wrap(text: str) -> list[str]:
    import textwrap

    return textwrap.wrap(text, REPORT_WIDTH, break_long_words=False, break_on_hyphens=False,
                         subsequent_indent="  ") or [""]


def format_report(report: dict[str, Any]) -> str:
    """The text report: fits :data:`REPORT_WIDTH` columns; each release beside the true
    statistic; ε cells exact or rounded to :data:`TABLE_DIGITS` digits on the safe side."""
    from .cli._common import format_table

    lines = _wrap(f"odp demo — {report['dataset']}; total budget ε={report['budget']['epsilon']}, "
                  f"δ={report['budget']['delta']}; randomness: {report['rng']}")
    lines.append("")
    table = []
    for i, row in enumerate(report["releases"], 1):
        if "refused" in row:
            table.append([i, _fit(row["release"], 30), "refused: over budget", "", "", "", ""])
            continue
        table.append([
            i, _fit(row["release"], 30), _fit(row["value"], 17), _fit(row.get("true", ""), 17),
            _short(row["epsilon_worst_case"], "up", TABLE_DIGITS),
            _short(row["epsilon_charged"], "up", TABLE_DIGITS),
            _short(row["epsilon_saved"], "down", TABLE_DIGITS),
        ])
    lines.append(format_table(
        ["#", "release", "released value", "true value", "ε DP", "ε ODP", "saved"], table))
    s = report["summary"]
    worst, charged = Fraction(s["epsilon_worst_case"]), Fraction(s["epsilon_charged"])
    total = Fraction(report["budget"]["epsilon"])
    cert = report["certificate"]
    over = (f" — more than the budget of {format_fraction(total)}: with plain DP accounting "
            "these same releases would not all have fit" if worst > total else "")
    lines += [""]
    for text in (
        "true value: the statistic on the records themselves (for models, the accuracy of the "
        "same model fitted without noise), computed only to compare — it is not released. "
        "ε DP: the round's worst case (plain DP accounting); ε ODP: what ODP charged; saved: "
        f"the difference. ε cells are exact when {TABLE_DIGITS} significant digits suffice, "
        f"else rounded to {TABLE_DIGITS} on the safe side and marked: ≤x (a cost, at most x), "
        "≥x (a saving, at least x); the exact values are in the ledger and in --json.",
        f"sum of the rounds' worst cases (plain DP accounting): "
        f"{display_named('ε', worst)}{over}.",
        f"ODP accounting charged {display_named('ε', charged)} (saved "
        f"{display_named('ε', worst - charged, 'down')}), "
        f"{display_named('δ', Fraction(s['delta_charged']))}; remaining budget: "
        f"{display_named('ε', Fraction(s['remaining']['epsilon']), 'down')}, "
        f"{display_named('δ', Fraction(s['remaining']['delta']), 'down')}.",
        *_lane_lines(report),
        f"certificate written to {cert['path']} — "
        + ("verified by the checker generated from the Lean rules"
           if cert["verified"] else f"NOT verified: {cert['message']}"),
        f"ledger written to {report['ledger']} (inspect: odp ledger show {report['ledger']})",
    ):
        lines += _wrap(text)
    lines += ["", "per mechanism — ε charged by ODP of its worst case (the rule that sets it):"]
    width = max((len(m["mechanism"]) for m in report["per_mechanism"]), default=0)
    for m in report["per_mechanism"]:
        outcome = "released" if m["released"] else "withheld (⊥)"
        lines.append(f"  {m['mechanism']:<{width}}  {outcome:<12}  ε "
                     f"{_short(m['charged'], 'up', TABLE_DIGITS)} of "
                     f"{_short(m['worst_case'], 'up', TABLE_DIGITS)}  ({m['rule']})")
    return "\n".join(lines)


def _lane_lines(report: dict[str, Any]) -> list[str]:
    """One line per composition lane of the demo's ledger, and the session's reading."""
    out = []
    for lane in report.get("lanes", []):
        used = lane["current"]
        out.append(f"lane {lane['name']} ({lane['notion']}): share "
                   f"{display_named('ε', Fraction(lane['budget']['epsilon']), 'down')} "
                   f"{display_named('δ', Fraction(lane['budget']['delta']), 'down')}, "
                   f"{lane['rounds']} round(s), used "
                   f"{display_named('ε', Fraction(used['epsilon']))} "
                   f"{display_named('δ', Fraction(used['delta']))}")
    if "session_spent" in report:
        spent = report["session_spent"]
        out.append(f"session spent: {display_named('ε', Fraction(spent['epsilon']))}, "
                   f"{display_named('δ', Fraction(spent['delta']))} (the lanes' readings "
                   "added up; docs/filters.md, 'Composition lanes')")
    return out
