"""The demo session (odp.demo, `odp demo`): its report agrees with the ledger it writes, it
exercises every ODP mechanism of Hartmann et al. 2022, and its certificate verifies."""

from __future__ import annotations

import json
import re
from fractions import Fraction

import numpy as np
import pytest

from odp.certs.verify import verify_file
from odp.cli import main
from odp.ledger import SQLiteLedger


def test_demo_report_savings_equal_ledger_refunds(tmp_path, capsys):
    path = tmp_path / "demo.db"
    assert main(["demo", "--ledger", str(path), "--seed", "4", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    ledger = SQLiteLedger(path, readonly=True)
    rounds = ledger.rounds()
    ledger.close()
    released = [r for r in report["releases"] if "refused" not in r]
    assert len(released) == len(rounds) >= 6
    for row, rec in zip(released, rounds):
        assert row["mechanism"] == rec.mechanism
        assert Fraction(row["epsilon_worst_case"]) == rec.sup_epsilon
        assert Fraction(row["epsilon_saved"]) == rec.refund
        assert Fraction(row["epsilon_charged"]) == rec.charged
        assert Fraction(row["epsilon_saved"]) == rec.sup_epsilon - rec.charged
    total_saved = sum(rec.refund for rec in rounds)
    assert Fraction(report["summary"]["epsilon_saved"]) == total_saved > 0
    # the ledger show command reads the same file, read-only
    assert main(["ledger", "show", str(path), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert len(shown["rounds"]) == len(rounds)
    assert shown["remaining"] == report["summary"]["remaining"]


def test_demo_runs_every_paper_mechanism_and_certifies(tmp_path, capsys):
    path = tmp_path / "demo.db"
    assert main(["demo", "--ledger", str(path), "--seed", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    mechanisms = {row["mechanism"] for row in report["releases"]}
    assert {"svt", "iqr", "median", "noisy_gd", "logreg_with_test", "dpsgd"} <= mechanisms
    assert any(m.startswith("laplace[") for m in mechanisms)  # the SVT-selected entries
    by_mech = {row["mechanism"]: row for row in report["releases"]}
    svt = by_mech["svt"]
    assert Fraction(svt["epsilon_charged"]) < Fraction(svt["epsilon_worst_case"])  # c' < c
    sgd = by_mech["dpsgd"]  # the DP-SGD round: charged the epochs it ran
    assert "stopped after" in sgd["detail"] and "epochs" in sgd["detail"]
    assert sgd["value"].startswith("acc. ") and sgd["true"].startswith("acc. ")
    assert Fraction(sgd["epsilon_charged"]) <= Fraction(sgd["epsilon_worst_case"])
    cert = report["certificate"]
    assert cert["verified"]
    result = verify_file(cert["path"])
    assert result.ok
    assert result.remaining.to_json() == report["summary"]["remaining"]


def test_demo_text_output_ends_with_the_per_mechanism_summary(tmp_path, capsys):
    path = tmp_path / "text.db"
    assert main(["demo", "--ledger", str(path), "--seed", "7"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert any(line.startswith(f"ledger written to {path}") for line in out)
    text = " ".join(" ".join(out).split())  # long lines are wrapped at 100 columns
    assert re.search(r"certificate written to \S+ — verified", text)
    assert any(line.startswith("ODP accounting charged") for line in out)
    names = ["Laplace count", "SVT selection", "SVT-selected counts", "M_IQR (PTR)", "median",
             "noisy gradient descent", "tested model (Alg. 5)", "DP-SGD"]
    tail = out[-len(names):]
    assert out[-len(names) - 1].startswith("per mechanism — ε charged by ODP of its worst case")
    for name, line in zip(names, tail):  # "ε X of Y (rule)", in session order
        assert line.strip().startswith(name)
        assert re.search(r"  ε ≤?[\d.]+ of ≤?[\d.]+  \(", line), line


def test_demo_table_fits_100_columns_shows_true_values_and_its_footnote_holds(tmp_path, capsys):
    path = tmp_path / "t.db"
    assert main(["demo", "--ledger", str(path), "--seed", "3", "--records", "2000"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 100, max(lines, key=len)
    header = next(i for i, line in enumerate(lines) if line.startswith("#   release"))
    assert "released value" in lines[header] and "true value" in lines[header]
    rows = lines[header + 2:lines.index("", header)]
    assert len(rows) >= 10
    # the footnote: ε cells are exact with at most 4 significant digits, else marked
    text = " ".join(out.split())  # long lines are wrapped
    assert "exact when 4 significant digits suffice, else rounded to 4" in text
    for row in rows:
        cells = row.split()
        for cell in cells[-3:]:
            if cell[0] in "≤≥":
                digits = cell[1:].replace(".", "").lstrip("0")
                assert len(digits) <= 4, row
            else:
                assert len(cell.replace(".", "").lstrip("0")) <= 4, row  # exact and short
    report_rows = _json_report(tmp_path, capsys)["releases"]
    for row in report_rows:  # every released round has its true statistic beside it
        if "refused" not in row:
            assert row["true"] not in ("", None), row
    by_mech = {row["mechanism"]: row for row in report_rows}
    count = by_mech["laplace"]
    assert int(count["true"]) > 0 and abs(float(count["value"]) - int(count["true"])) < 200


def _json_report(tmp_path, capsys) -> dict:
    path = tmp_path / "j.db"
    assert main(["demo", "--ledger", str(path), "--seed", "3", "--records", "2000",
                 "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_demo_refuses_to_overwrite(tmp_path, capsys):
    path = tmp_path / "x.db"
    path.write_text("")
    assert main(["demo", "--ledger", str(path)]) == 2
    assert "already exists" in capsys.readouterr().err


def test_ledger_show_on_missing_file_is_a_clean_error(tmp_path, capsys):
    assert main(["ledger", "show", str(tmp_path / "nope.db")]) == 2
    assert "no ledger" in capsys.readouterr().err


def test_demo_keeps_the_releases_made_before_a_later_refusal(tmp_path, monkeypatch):
    """Another process spends on the demo's ledger while the first SVT-selected entry is
    being released: that entry's value is still reported, the next entries are refused."""
    import odp.demo as demo
    from odp import DP, Accountant

    path = tmp_path / "shared.db"
    real = demo.sparse_vector_release
    calls: dict[int, int] = {}

    def squeezed(acc, data, entries, *args, **kwargs):
        other = Accountant(ledger=path)

        def wrap(i, f):
            def entry(d):
                calls[i] = calls.get(i, 0) + 1
                if calls[i] == 2 and not any(r.mechanism == "other" for r in other.history):
                    # the entry's own Laplace round is running: take all but 0.3 of the rest
                    other.charge(DP(other.remaining.epsilon - Fraction(3, 10)),
                                 mechanism="other")
                return f(d)
            return entry

        return real(acc, data, [wrap(i, f) for i, f in enumerate(entries)], *args, **kwargs)

    monkeypatch.setattr(demo, "sparse_vector_release", squeezed)
    report = demo.run_demo(path, seed=4)
    rows = report["releases"]
    mechanisms = [r.get("mechanism") for r in rows if "refused" not in r]
    assert mechanisms[:2] == ["laplace", "svt"] and mechanisms[3] == "other"
    first_bin = mechanisms[2][len("laplace["):-1]  # the first bin SVT selected
    assert mechanisms[2].startswith("laplace[[")
    first = next(r for r in rows if r.get("mechanism") == mechanisms[2])
    assert f"count in radius bin {first_bin}" in first["release"] and first["value"]
    refused = [r["release"] for r in rows if "refused" in r]
    assert refused[0] == "SVT sparse-vector release"
    assert report["certificate"]["verified"]


# ------------------------------------------------------------------ every mechanism releases
@pytest.mark.slow  # 20 full demo sessions
def test_every_mechanism_releases_in_most_runs_and_pays_at_most_its_worst_case():
    """20 seeds of the default session: each mechanism releases (no ⊥) in at least 15 runs;
    SVT and the gradient descent pay less than their worst case in most runs."""
    from odp import Accountant, SeededRandom
    from odp.demo import DEFAULT_RECORDS, load_data, mechanism_summary, run_session

    data = load_data(DEFAULT_RECORDS)
    released: dict[str, int] = {}
    cheaper: dict[str, int] = {}
    for seed in range(20):
        acc = Accountant("6", "1e-5", rng=SeededRandom(seed))
        notes = run_session(acc, data)
        assert not [k for k in notes if k.startswith("refused")]
        for m in mechanism_summary(acc.history):
            released[m["mechanism"]] = released.get(m["mechanism"], 0) + m["released"]
            assert Fraction(m["charged"]) <= Fraction(m["worst_case"])
            cheaper[m["mechanism"]] = (cheaper.get(m["mechanism"], 0)
                                       + (Fraction(m["charged"]) < Fraction(m["worst_case"])))
    assert len(released) == 8
    assert all(count >= 15 for count in released.values()), released
    assert cheaper["SVT selection"] >= 15 and cheaper["noisy gradient descent"] >= 15, cheaper
    assert cheaper["DP-SGD"] >= 15, cheaper  # stopped before its last epoch


def test_the_real_569_patients_are_available_and_show_why_the_default_is_synthetic(tmp_path):
    from odp.demo import run_demo

    report = run_demo(tmp_path / "real.db", seed=3, records=None)
    assert report["records"] == 569 and "real patients" in report["dataset"]
    by_name = {m["mechanism"]: m for m in report["per_mechanism"]}
    assert not by_name["M_IQR (PTR)"]["released"]  # PTR's IQR test fails at this size
    synthetic = run_demo(tmp_path / "syn.db", seed=3)
    assert synthetic["records"] == 20000 and "synthetic" in synthetic["dataset"]


def test_synthetic_cohort_is_fixed_public_and_matches_its_model():
    from odp.demo import load_data, synthetic_records

    a, la = synthetic_records(5000)
    b, lb = synthetic_records(5000)
    assert (a == b).all() and (la == lb).all()  # the public seed: the same data every run
    real = load_data(None)
    share_real = float((real.labels > 0).mean())
    assert abs(float((la > 0).mean()) - share_real) < 1e-3  # the real class ratio
    radius = a[:, 0]
    assert 12 < float(np.median(radius)) < 15 and (radius >= 6.981).all()  # clipped to DESCR
