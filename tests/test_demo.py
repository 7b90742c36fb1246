"""The demo session (odp.demo, `odp demo`): its report agrees with the ledger it writes, it
exercises every ODP mechanism of paper 002, and its certificate verifies."""

from __future__ import annotations

import json
from fractions import Fraction

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
    assert {"svt", "iqr", "median", "noisy_gd", "logreg_with_test"} <= mechanisms
    assert any(m.startswith("laplace[") for m in mechanisms)  # the SVT-selected entries
    by_mech = {row["mechanism"]: row for row in report["releases"]}
    svt = by_mech["svt"]
    assert Fraction(svt["epsilon_charged"]) < Fraction(svt["epsilon_worst_case"])  # c' < c
    cert = report["certificate"]
    assert cert["verified"]
    result = verify_file(cert["path"])
    assert result.ok
    assert result.remaining.to_json() == report["summary"]["remaining"]


def test_demo_text_output_ends_with_the_ledger_line(tmp_path, capsys):
    path = tmp_path / "text.db"
    assert main(["demo", "--ledger", str(path), "--seed", "7"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith(f"ledger written to {path}")
    assert any("certificate written to" in line and "verified" in line for line in out)
    assert any(line.startswith("ODP accounting charged") for line in out)


def test_demo_refuses_to_overwrite(tmp_path, capsys):
    path = tmp_path / "x.db"
    path.write_text("")
    assert main(["demo", "--ledger", str(path)]) == 1
    assert "already exists" in capsys.readouterr().err


def test_ledger_show_on_missing_file_is_a_clean_error(tmp_path, capsys):
    assert main(["ledger", "show", str(tmp_path / "nope.db")]) == 1
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
    assert mechanisms[:4] == ["laplace", "svt", "laplace[[10,12)]", "other"]
    first = next(r for r in rows if r.get("mechanism") == "laplace[[10,12)]")
    assert "count in radius bin [10,12)" in first["release"] and first["value"]
    refused = [r["release"] for r in rows if "refused" in r]
    assert refused[0] == "SVT sparse-vector release"
    assert report["certificate"]["verified"]
