"""A read, or a call that fails, leaves the directory byte-identical: for a ledger copied without
its ``.head`` file, every reader (``odp ledger show``, ``ledger verify``, ``certify``, ``verify
--ledger``) and a writing open (``odp.Accountant(ledger=…)``) refuses it -- rows lost since the
head was last written cannot be ruled out -- and creates no (empty) ``LEDGER.head``."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

import odp
from odp.cli import main


def _tree(d: Path) -> dict[str, str]:
    """Every file under ``d`` (SQLite's -wal/-shm companions included) with its SHA-256."""
    return {str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(d.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    d = tmp_path_factory.mktemp("src")
    acc = odp.Accountant("1", "1e-6", ledger=d / "run.db", rng=odp.SeededRandom(3))
    acc.charge(odp.DP("0.1"))
    acc.run(odp.ToyMechanism(len, epsilon="0.2"), [1, 2])
    acc.certificate().write(d / "run.cert")
    acc.close()
    return d


@pytest.fixture
def headless(source, tmp_path):
    """The ledger copied without its head file (and its certificate, elsewhere)."""
    d = tmp_path / "copy"
    d.mkdir()
    shutil.copyfile(source / "run.db", d / "run.db")
    return d


@pytest.mark.parametrize("argv,code", [
    (["ledger", "show", "{db}"], 2),
    (["ledger", "show", "--json", "{db}"], 2),
    (["ledger", "verify", "{db}"], 2),
    (["certify", "{db}", "-o", "{out}/new.cert"], 2),
    (["verify", "--ledger", "{db}", "{cert}"], None),  # verify's own code: not asserted here
])
def test_readers_of_a_headless_copy_write_nothing(argv, code, source, headless, tmp_path,
                                                  capsys):
    out = tmp_path / "out"
    out.mkdir()
    before, before_out = _tree(headless), _tree(out)
    argv = [a.format(db=headless / "run.db", out=out, cert=source / "run.cert") for a in argv]
    rc = main(argv)
    assert rc != 0
    if code is not None:
        assert rc == code
    captured = capsys.readouterr()
    assert "no head file" in captured.err + captured.out
    assert _tree(headless) == before  # no LEDGER.head, no -wal/-shm, the database unchanged
    assert _tree(out) == before_out


def test_accountant_on_a_headless_copy_writes_nothing(headless):
    before = _tree(headless)
    with pytest.raises(odp.LedgerCorrupted, match="no head file"):
        odp.Accountant(ledger=headless / "run.db")
    with pytest.raises(odp.LedgerCorrupted, match="no head file"):
        odp.Accountant("1", "1e-6", ledger=headless / "run.db")
    assert _tree(headless) == before
    assert not (headless / "run.db.head").exists()


def test_readonly_open_of_a_headless_copy_writes_nothing(headless):
    from odp.ledger import open_readonly

    before = _tree(headless)
    with pytest.raises(odp.LedgerCorrupted, match="no head file"):
        open_readonly(str(headless / "run.db"))
    assert _tree(headless) == before


def test_reanchor_still_writes_the_head(headless):
    """The one command meant to accept the rows as they are still does (a writing command)."""
    assert main(["ledger", "reanchor", str(headless / "run.db")]) == 0
    assert (headless / "run.db.head").stat().st_size > 0
    acc = odp.Accountant(ledger=headless / "run.db")
    acc.close()
