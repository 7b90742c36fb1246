"""The ledger's head file: loss- and rollback-evidence kept outside the database.

After every commit the ledger writes ``LEDGER.head`` (and every *anchor*: further head files
the data owner keeps elsewhere)::

    {"format": "odp-ledger-head", "version": 1, "ledger_id": "…", "rows": 12, "rounds": 6,
     "head": "<hash of row 12>", "mac": "<HMAC, only with a ledger key>"}

It is written atomically — a new file is written and ``fsync``-ed, then renamed over the old one,
and the directory is ``fsync``-ed — and only ever forward (under an exclusive ``flock`` on
``LEDGER.head.lock``, a head never replaces one with more rows), so processes sharing a ledger
never move it back.  On open, the ledger must *extend* every head it finds: the row the head
names must exist and carry the head's hash.  Fewer rows means committed rows were lost (a
deleted or truncated ``-wal`` file, a truncated database, an older copy restored); a different
hash means the history was rewritten.  What this does and does not detect is in docs/ledger.md.
"""

from __future__ import annotations

import errno
import fcntl
import hmac
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..errors import LedgerCorrupted, LedgerError
from .chain import ChainHead, head_mac

HEAD_FORMAT = "odp-ledger-head"
HEAD_VERSION = 1
_MAX_HEAD_BYTES = 64 * 1024


def head_path(ledger_path: str | os.PathLike) -> Path:
    """Where the head file of ``ledger_path`` lives: ``LEDGER.head``."""
    return Path(str(ledger_path) + ".head")


@dataclass(frozen=True)
class HeadRecord:
    ledger_id: str
    rows: int
    rounds: int
    head: str
    mac: str | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"format": HEAD_FORMAT, "version": HEAD_VERSION, "ledger_id": self.ledger_id,
               "rows": self.rows, "rounds": self.rounds, "head": self.head}
        if self.mac is not None:
            out["mac"] = self.mac
        return out

    @classmethod
    def of(cls, ledger_id: str, chain: ChainHead, key: bytes | None) -> "HeadRecord":
        mac = (head_mac(key, ledger_id, chain.rows, chain.rounds, chain.head)
               if key is not None else None)
        return cls(ledger_id, chain.rows, chain.rounds, chain.head, mac)


def read_head(path: Path) -> HeadRecord | None:
    """The head recorded in ``path``; ``None`` if there is no such file."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(_MAX_HEAD_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise LedgerError(f"cannot read the ledger head file {path}: {exc}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or data.get("format") != HEAD_FORMAT:
            raise ValueError("not an odp ledger head")
        if data.get("version") != HEAD_VERSION:
            raise ValueError(f"head version {data.get('version')!r}")
        rows, rounds = data["rows"], data["rounds"]
        head = data["head"]
        if not (isinstance(rows, int) and isinstance(rounds, int) and 0 <= rounds <= rows):
            raise ValueError("bad row counts")
        if not (isinstance(head, str) and len(head) == 64):
            raise ValueError("bad head hash")
        bytes.fromhex(head)
        mac = data.get("mac")
        if mac is not None and not isinstance(mac, str):
            raise ValueError("bad mac")
        return HeadRecord(str(data["ledger_id"]), rows, rounds, head, mac)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise LedgerCorrupted(f"the ledger head file {path} is unreadable ({exc}); the spent "
                              "budget is unknown") from None


def check_head(record: HeadRecord, path: Path, ledger_id: str, chain: ChainHead,
               hash_at: Callable[[int], str | None], key: bytes | None) -> None:
    """Raise :class:`LedgerCorrupted` unless the verified chain extends ``record``.
    ``hash_at(n)`` is the verified hash of row ``n`` (the genesis hash for ``n = 0``)."""
    if record.ledger_id != ledger_id:
        raise LedgerCorrupted(
            f"the head file {path} belongs to ledger {record.ledger_id}, not to {ledger_id} "
            "(a different ledger file was put in its place?); the spent budget is unknown")
    if key is not None:
        if record.mac is None or not hmac.compare_digest(
                record.mac, head_mac(key, record.ledger_id, record.rows, record.rounds,
                                     record.head)):
            raise LedgerCorrupted(f"the head file {path} does not verify with the ledger key "
                                  "(forged or replaced); the spent budget is unknown")
    if record.rows > chain.rows:
        if record.rounds > chain.rounds:
            lost = (f"committed rounds {chain.rounds + 1}..{record.rounds} "
                    f"(rows {chain.rows + 1}..{record.rows})")
        else:
            lost = f"committed rows {chain.rows + 1}..{record.rows} (settlements)"
        raise LedgerCorrupted(
            f"the ledger lost {lost}; the spent budget is unknown. {path} records "
            f"{record.rows} rows but the ledger holds {chain.rows} (a deleted or truncated "
            "-wal file, a truncated database, or an older copy restored?). Restore the "
            "missing rows from a complete copy (the database with its -wal file); see "
            "docs/ledger.md", row=chain.rows + 1)
    if hash_at(record.rows) != record.head:
        raise LedgerCorrupted(
            f"row {record.rows} of the ledger does not carry the hash recorded in {path}: "
            "its history was rewritten or replaced; the spent budget is unknown",
            row=record.rows)


def write_head(path: Path, record: HeadRecord, *, force: bool = False) -> bool:
    """Atomically replace ``path`` with ``record`` unless it already records as many rows or
    more (``force`` replaces it anyway: ``odp ledger reanchor``).  Returns whether it wrote.
    Durable when it returns (the file and its directory are fsync-ed)."""
    lock_fd = os.open(str(path) + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX)
        if not force:
            current = read_head(path)
            if current is not None and current.rows >= record.rows:
                return False
        data = (json.dumps(record.to_json(), sort_keys=True) + "\n").encode("utf-8")
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        _fsync_dir(path.parent)
        return True
    finally:
        os.close(lock_fd)  # releases the flock


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # pragma: no cover - a platform without directory handles
        return
    try:
        os.fsync(fd)
    except OSError as exc:  # pragma: no cover - some file systems refuse directory fsync
        if exc.errno not in (errno.EINVAL, errno.EBADF):
            raise
    finally:
        os.close(fd)
