"""The demo session (odp.demo, `odp demo`): its report agrees with the ledger it writes."""

from __future__ import annotations

import json
from fractions import Fraction

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
        assert Fraction(row["epsilon_saved"]) == rec.refund
        assert Fraction(row["epsilon_charged"]) == rec.charged
    total_saved = sum(rec.refund for rec in rounds)
    assert Fraction(report["summary"]["epsilon_saved"]) == total_saved
    # the ledger show command reads the same file, read-only
    assert main(["ledger", "show", str(path), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert len(shown["rounds"]) == len(rounds)
    assert shown["remaining"] == report["summary"]["remaining"]


def test_demo_refuses_to_overwrite(tmp_path, capsys):
    path = tmp_path / "x.db"
    path.write_text("")
    assert main(["demo", "--ledger", str(path)]) == 1
    assert "already exists" in capsys.readouterr().err


def test_ledger_show_on_missing_file_is_a_clean_error(tmp_path, capsys):
    assert main(["ledger", "show", str(tmp_path / "nope.db")]) == 1
    assert "no ledger" in capsys.readouterr().err
