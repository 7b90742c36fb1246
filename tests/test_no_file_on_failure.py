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


# ------------------------------------------------------------------ Certificate.write
@pytest.fixture(scope="module")
def certificate():
    acc = odp.Accountant("1", "1e-6", rng=odp.SeededRandom(4))
    acc.charge(odp.DP("0.1"))
    return acc.certificate()


@pytest.mark.parametrize("where", ["adir", "missing/x.cert", "afile/x.cert", "sidedir"])
def test_certificate_write_refusals_are_typed_and_leave_nothing(where, certificate, tmp_path):
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("not a directory\n")
    (tmp_path / "sidedir.json").mkdir()  # the sidecar's path is a directory
    before = _tree(tmp_path), sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises(odp.errors.OutputError) as info:
        certificate.write(tmp_path / where)
    assert isinstance(info.value, odp.OdpError) and isinstance(info.value, OSError)
    assert str(tmp_path / where.split("/")[0]) in str(info.value)
    assert (_tree(tmp_path), sorted(p.name for p in tmp_path.rglob("*"))) == before


def test_certificate_write_on_a_full_disk_leaves_nothing(tmp_path):
    """A write that the file system refuses part-way (here: the file-size limit, which fails a
    write as a full disk does) raises OutputError and leaves no file, partial or temporary."""
    import subprocess
    import sys

    code = f"""
import resource, odp
acc = odp.Accountant("1", "1e-6", rng=odp.SeededRandom(4))
acc.charge(odp.DP("0.1"))
cert = acc.certificate()
resource.setrlimit(resource.RLIMIT_FSIZE, (64, resource.RLIM_INFINITY))
try:
    cert.write({str(tmp_path / "run.cert")!r})
except odp.errors.OutputError as exc:
    print("OutputError:", exc)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("OutputError:") and "File too large" in proc.stdout
    assert list(tmp_path.iterdir()) == []


def test_certificate_write_replaces_both_files_whole(certificate, tmp_path):
    """A successful write still replaces earlier files (the API does, certify asks --force),
    readable by others as any new file, and leaves no temporary file."""
    target = tmp_path / "run.cert"
    target.write_text("old\n")
    text, side = certificate.write(target)
    assert text.read_text() == certificate.text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.cert", "run.cert.json"]
    assert side.stat().st_mode & 0o777 == text.stat().st_mode & 0o777
