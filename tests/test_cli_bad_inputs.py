"""The exit-code rule of every ``odp`` command, enforced over a table of bad inputs.

* **2** -- the input is not what the command takes: not a ledger or certificate, a missing
  file, a bad or out-of-range value, an empty path, a request the command refuses;
* **1** -- only a well-formed input that fails its check (``odp verify``'s negative verdict);
* **70** -- never for user input (it means a bug in odp).

Every row gives the arguments, the expected exit code and what the one-line message must say;
each call must print exactly one line on stderr (no traceback, no "internal error") and leave the
working directory byte-identical -- nothing created, truncated or rewritten.  ``odp verify``'s
own inputs are covered by its tests (tests/test_certificates.py and neighbours)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

import pytest

import odp
from odp.cli import EXIT_INTERNAL, main

#: (argv, exit code, regex the message must match).  ``{dir}`` is the inputs directory.
TABLE: list[tuple[str, int, str]] = [
    # ----------------------------------------------------------------- values given as options
    ("optdel --epsilon 0.1 --delta -1e-6 --stops 1,2,3 --costs simple", 2,
     r"delta.* must be >= 0, got -0\.000001"),
    ("optdel --epsilon 0.1 --stops -1,2,3 --costs simple", 2,
     r"stopping point must be an integer >= 1, got -1"),
    ("buckets --mechanism gaussian --sigma 1 --delta -1e-6", 2,
     r"delta must be >= 0, got -0\.000001"),
    ("buckets --mechanism gaussian --sigma -.5 --delta 1e-6", 2, r"sigma must be > 0"),
    ("table1 --deltas -1e-5", 2, r"delta must be >= 0"),
    ("ledger init {dir}/new.db --epsilon 1 --delta -1e-6", 2, r"delta must be >= 0"),
    ("demo --records 1_000", 2, r"invalid int value: '1_000'"),
    ("optdel --epsilon 0.1 --stops 1,2,3 --costs simple --k 1_0", 2,
     r"invalid int value: '1_0'"),
    # ----------------------------------------------------------------- numbers with underscores
    ("ledger init {dir}/new.db --epsilon 1_000", 2, r"without underscores.*got '1_000'"),
    ("ledger init {dir}/new.db --epsilon 1 --delta 1e-1_0", 2, r"without underscores"),
    ("table1 --epsilon 1_0 --no-check", 2, r"without underscores"),
    ("buckets --mechanism gaussian --sigma 1_0 --delta 1e-5", 2, r"without underscores"),
    ("optdel --epsilon 0.1 --stops 1_0,2_0 --costs simple", 2, r"--stops: not a list of"),
    ("buckets --mechanism laplace --scale 1 --compositions 1_0 --delta 1e-5", 2,
     r"--compositions must be an integer"),
    # ----------------------------------------------------------------- optdel's lists
    ("optdel --epsilon 0.1 --stops 3,2,1 --costs simple", 2,
     r"--stops must increase strictly, got 3 then 2"),  # was exit 70 (IndexError)
    ("optdel --epsilon 0.1 --stops 3,2,...,1 --costs simple", 2, r"must increase strictly"),
    ("optdel --epsilon 0.1 --stops 1,1,3 --costs simple", 2, r"must increase strictly"),
    ("optdel --epsilon 0.1 --stops 0,2,3 --costs simple", 2, r"integer >= 1, got 0"),
    ("optdel --epsilon 0.1 --stops 1,2,3 --costs simple --k -3", 2, r"--k must be >= 1"),
    ("optdel --epsilon 0.1 --stops 1,2,3 --costs 1,2", 2, r"expected 3 costs"),
    ("optdel --epsilon 0.1 --stops 1,2,3 --costs 1,2,x", 2, r"not a list of numbers"),
    ("optdel --epsilon 0.1 --stops , --costs simple", 2, r"--stops is empty"),
    ("optdel --steps-file missing.txt --stops 1,2 --costs simple", 2,
     r"cannot read --steps-file 'missing.txt': No such file"),
    ("optdel --steps-file adir --stops 1,2 --costs simple", 2, r"Is a directory"),
    ("optdel --steps-file file.txt --stops 1,2 --costs simple", 2,
     r"file.txt:1: expected 'epsilon,delta'"),
    # ----------------------------------------------------------------- output paths
    ("figure 1 -o ''", 2, r"-o: empty path"),  # wrote fig1.png
    ("figure 1 -o file.txt/x.png", 2, r"file.txt is a file, not a directory"),
    ("figure 1 -o missing/x.png", 2, r"the directory .*missing does not exist"),
    ("figure 1 -o adir", 2, r"is a directory, not a file path"),
    ("figure 1 -o x.jpg", 2, r"figures are written as PNG"),
    ("figure nosuch", 2, r"unknown figure 'nosuch'"),
    ("certify ok.db -o file.txt/x.cert", 2, r"file.txt is a file, not a directory"),
    ("certify ok.db -o file.txt/sub/x.cert", 2, r"file.txt is a file, not a directory"),
    ("certify ok.db -o missing/x.cert", 2, r"the directory .*missing does not exist"),
    ("certify ok.db -o ''", 2, r"-o: empty path"),
    ("certify ok.db -o adir", 2, r"is a directory"),
    ("certify ok.db -o file.txt", 2, r"certify does not replace files"),
    ("certify ok.db -o out.cert --sign-key missing.key", 2, r"--sign-key missing.key: no such"),
    ("demo --ledger file.txt/x.db", 2, r"file.txt is a file, not a directory"),
    ("demo --ledger ''", 2, r"--ledger: empty path"),
    ("demo --ledger ok.db", 2, r"already exists"),
    ("ledger init file.txt/x.db --epsilon 1", 2, r"file.txt is a file, not a directory"),
    ("ledger init missing/x.db --epsilon 1", 2, r"the directory .*missing does not exist"),
    ("ledger init '' --epsilon 1", 2, r"the ledger path is empty"),
    ("ledger init ok.db --epsilon 1", 2, r"already exists"),
    ("ledger init file.txt --epsilon 1", 2, r"already exists"),
    ("ledger keygen ''", 2, r"key file: empty path"),
    ("ledger keygen file.txt/k.key", 2, r"file.txt is a file, not a directory"),
    ("ledger keygen file.txt", 2, r"already exists; not overwriting a key"),
    ("table1 --deltas ''", 2, r"--deltas is empty"),  # ran the paper's deltas instead
    ("table1 --deltas ,", 2, r"--deltas is empty"),
    # ----------------------------------------------------------------- buckets: no empty answers
    ("buckets --mechanism gaussian --sigma 1 --delta 1e-400", 2,
     r"--delta='1e-400' is outside the range odp accepts"),  # was exit 0, upper bound inf
    ("buckets --mechanism gaussian --sigma 1 --delta 1e-300", 2,
     r"no finite epsilon could be certified for delta <= 1e-300.*raise delta above that "
     r"floor.*nothing was certified"),  # was exit 0, upper bound inf
    ("buckets --mechanism gaussian --sigma 1 --epsilon 1e400", 2, r"outside the range"),
    ("buckets --mechanism gaussian --sigma 1 --epsilon 1e-400", 2, r"outside the range"),
    ("buckets --mechanism approximate-dp --mechanism-epsilon 0.5 --mechanism-delta 0.01 "
     "--compositions 10 --delta 1e-5", 2,
     r"no finite epsilon has delta <= 0.00001 .* distinguishing events"),
    ("buckets --mechanism gaussian --sigma 1 --delta 0", 2, r"delta must be > 0"),
    ("buckets --mechanism gaussian --sigma 1 --delta 1", 2, r"delta must be < 1"),
    ("buckets --mechanism gaussian --delta 1e-5", 2, r"needs --sigma"),
    ("buckets --spec missing.json --delta 1e-5", 2, r"cannot read the spec missing.json"),
    ("buckets --spec file.txt --delta 1e-5", 2, r"not valid JSON"),
    ("buckets --mechanism gaussian --sigma 1 --delta 1e-5 --epsilon 1", 2,
     r"not allowed with argument --delta"),
    ("optdel --epsilon 1e300 --stops 1,2,3 --costs simple", 2,
     r"cost E\(P_2\)=about 2e300 is outside the range"),  # not a 300-digit Fraction(…)
    # ----------------------------------------------------------------- ledgers that are not
    ("ledger show nohead.db", 2, r"no head file nohead.db.head"),  # and no empty .head left
    ("ledger verify nohead.db", 2, r"no head file"),
    ("certify nohead.db -o out.cert", 2, r"no head file"),
    ("ledger show missing.db", 2, r"no ledger at missing.db"),
    ("ledger verify ''", 2, r"the ledger path is empty"),
    ("ledger show adir", 2, r"adir is a directory, not a ledger file"),
    ("ledger show file.txt", 2, r"file.txt is not an odp ledger"),
    ("ledger show empty.txt", 2, r"no ledger at empty.txt"),
    ("ledger verify foreign.db", 2, r"SQLite database of another program"),
    ("certify file.txt -o out.cert", 2, r"file.txt is not an odp ledger"),
    ("ledger upgrade ok.db", 2, r"only version 1 is upgraded"),
    ("ledger reanchor missing.db", 2, r"no ledger at missing.db"),
    ("ledger show ok.db --key-file missing.key", 2, r"cannot read the ledger key file"),
    ("ledger init new.db --epsilon 1 --key-file file.txt", 2, r"at least 32 are needed"),
    # ----------------------------------------------------------------- table1, demo
    ("table1 --epsilon 0", 2, r"epsilon0 must be > 0"),
    ("table1 --epsilon x", 2, r"must be a finite number"),
    ("table1 --epsilon 1e400", 2, r"outside the range"),
    ("table1 --deltas 1", 2, r"delta must be < 1"),
    ("table1 --deltas 1e-400", 2, r"outside the range"),
    ("table1 --k-max 0", 2, r"k_max must be an integer >= 1"),
    ("table1 --k-max 1e400", 2, r"invalid int value"),
    ("demo --records 99", 2, r"records must be an integer in \[100, 1000000\]"),
    ("demo --records x", 2, r"invalid int value"),
    ("demo --seed 1.5", 2, r"invalid int value"),
    ("demo --records 100 --max-seconds 0.0000001", 2, r"would take about"),
    # ----------------------------------------------------------------- the command itself
    ("ledger bogus", 2, r"invalid choice: 'bogus'"),
    ("bogus", 2, r"invalid choice: 'bogus'"),
    # ----------------------------------------------------------------- found by sweeping values
    ("optdel --epsilon 0.1 --stops 1,2,3 --costs 1,1,1 --grid 1e400", 2,
     r"--grid='1e400' is outside the range"),  # was exit 70 (OverflowError)
    ("optdel --epsilon 0.1 --stops 1,2,3 --costs 1,1,1 --grid 1e-400", 2,
     r"outside the range"),  # was exit 70 (ZeroDivisionError)
    ("optdel --epsilon 0.1 --stops 1,2,3 --costs 1,1,1 --grid 1e-320", 2,
     r"outside the range"),  # was exit 70 (OverflowError)
    ("buckets --mechanism gaussian --sigma 1 --delta 1e-5 --target-width 1_0", 2,
     r"--target-width must be written without underscores"),  # was read as 10
    ("buckets --mechanism gaussian --sigma 1 --delta 1e-5 --target-width ٣", 2,
     r"--target-width must be written with ASCII digits"),  # was read as 3
    ("buckets --mechanism gaussian --sigma 1 --delta 1e-5 --max-seconds 1_0", 2,
     r"--max-seconds must be a number of seconds"),  # was read as 10
    # ----------------------------------------------------------------- limits
    ("buckets --mechanism gaussian --sigma 1 --delta 1e-5 --max-memory 1e400", 2,
     r"--max-memory '1e400' is too large to be a size.*give inf for no limit"),
    ("buckets --mechanism gaussian --sigma 1 --delta 1e-5 --max-seconds 1e400", 2,
     r"--max-seconds '1e400' is too large.*give inf for no limit"),
    ("optdel --epsilon 0.1 --stops 1,2,3 --costs simple --max-memory 0", 2,
     r"--max-memory must be > 0"),
    ("optdel --epsilon 0.1 --stops 1,2,3 --costs simple --max-seconds nan", 2,
     r"--max-seconds must be > 0"),
]


@pytest.fixture
def inputs(tmp_path):
    """A directory of inputs of every kind; the commands run inside it."""
    d = tmp_path / "in"
    d.mkdir()
    (d / "file.txt").write_text("hello\n")
    (d / "empty.txt").write_text("")
    (d / "adir").mkdir()
    acc = odp.Accountant("1", "1e-6", ledger=d / "ok.db", rng=odp.SeededRandom(1))
    acc.charge(odp.DP("0.1"))
    acc.close()
    shutil.copyfile(d / "ok.db", d / "nohead.db")  # a copy without its head file
    import sqlite3

    foreign = sqlite3.connect(d / "foreign.db")  # a SQLite database of another program
    foreign.execute("CREATE TABLE t (x)")
    foreign.commit()
    foreign.close()
    return d


def _tree(d: Path) -> dict[str, str]:
    return {str(p.relative_to(d)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file()
                                    else "dir") for p in sorted(d.rglob("*"))}


@pytest.mark.parametrize("line,code,message", TABLE, ids=[row[0] for row in TABLE])
def test_bad_input(line, code, message, inputs, capsys, monkeypatch):
    import shlex

    monkeypatch.chdir(inputs)
    argv = [a.replace("{dir}", str(inputs)) for a in shlex.split(line)]
    before = _tree(inputs)
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse's own refusals exit from parse_args
        rc = exc.code
    err = capsys.readouterr().err
    assert rc != EXIT_INTERNAL
    assert rc == code, err
    lines = err.strip().splitlines()
    prefix = f"odp {argv[0]}" if argv[0] != "bogus" else "odp: error"
    assert len(lines) == 1 and lines[0].startswith(prefix), err
    assert "Traceback" not in err and "internal error" not in err
    assert re.search(message, lines[0]), lines[0]
    assert _tree(inputs) == before  # nothing created, truncated or rewritten
    assert os.getcwd() == str(inputs)


#: Inputs that are what the command takes, which once ended in an internal error (exit 70).
GOOD: list[str] = [
    "optdel --epsilon 1000 --stops 1,2,3 --costs simple",  # e^1000 overflowed a float
    "optdel --epsilon 1000 --stops 1,2,3 --costs lemma11:1e-6",
]


@pytest.mark.parametrize("line", GOOD)
def test_well_formed_input_that_crashed_now_runs(line, capsys):
    import shlex

    assert main(shlex.split(line)) == 0, capsys.readouterr().err


def test_the_rule_is_stated_in_the_help():
    from odp.cli import build_parser

    epilog = " ".join(str(build_parser().epilog).split())
    assert "Exit codes, the same for every command" in epilog
    assert "1 only for well-formed input that fails its check" in epilog
    assert "70 never for user input" in epilog
