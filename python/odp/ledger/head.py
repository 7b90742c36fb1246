"""The ledger's head file: loss- and rollback-evidence kept outside the database, and the
journal that makes a charge durable with one flush.

After every durable commit the ledger records its head in ``LEDGER.head`` (and in every
*anchor*: further head files the data owner keeps elsewhere)::

    {"format": "odp-ledger-head", "version": 2, "ledger_id": "…", "rows": 12, "rounds": 6,
     "head": "<hash of row 12>", "mac": "<HMAC, only with a ledger key>",
     "synced": 10, "tail": [0, 1310]}

The file has two 512-byte slots, each one such record with its SHA-256; a write replaces the
older slot and is made durable with ``fdatasync`` before the charge returns, so a crash at any
moment leaves a valid head (the new one or the previous one — a prefix, which is accepted).  It
only ever moves forward: an exclusive ``flock`` on the file serialises writers, and a head
never replaces one with more rows, so processes sharing a ledger never move it back.  On open,
the ledger must *extend* every head it finds: the row the head names must exist and carry the
head's hash.  Fewer rows means committed rows were lost (a deleted or truncated ``-wal`` file,
a truncated database, an older copy restored); a different hash means the history was
rewritten.  What this does and does not detect is in docs/ledger.md.

**The journal** (version 2, the default of SQLite ledgers).  SQLite then commits without its
own flush (``synchronous = NORMAL``), and the rows no head holds yet — ``synced+1..rows`` — are
appended, exactly as stored, to the journal area after the slots (64 KiB), which the slot's
``tail`` byte range names; the slot's one ``fdatasync`` makes the rows and the head durable
together: one flush per charge instead of two.  ``synced`` is how many rows were on disk in the
database when the journal started; when the journal is full the database is flushed first
and the journal starts again empty (``flush()``, ``close()`` and every open do the same).  A
crash that takes rows from the database (a power loss before SQLite wrote its ``-wal`` out)
leaves them in the journal: the next writing open puts them back after checking them against
the chain (``odp ledger restore``).  A version-1 record (anchors, ``head_sync=False``) has no
journal: every row it names was on disk.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import hmac
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol

from ..errors import LedgerCorrupted, LedgerError
from .chain import ChainHead, head_mac

HEAD_FORMAT = "odp-ledger-head"
HEAD_VERSION = 2  # version 1: no journal (every row it names was synced in the database)
HEAD_VERSIONS = (1, 2)


def head_path(ledger_path: str | os.PathLike[str]) -> Path:
    """Where the head file of ``ledger_path`` lives: ``LEDGER.head``."""
    return Path(str(ledger_path) + ".head")


@dataclass(frozen=True)
class HeadRecord:
    """A head: ``rows`` rows (``rounds`` of them reservations) ending in the hash ``head``.

    ``synced`` and ``tail`` (version 2, the journal): rows ``1..synced`` were on disk in the
    database when this head was written, and the head file's journal bytes ``tail`` (a byte
    range of the journal area) hold rows ``synced+1..rows`` exactly as stored — the rows the
    database may still lose in a power loss, since SQLite commits them without a flush.
    ``synced is None`` (version 1, and anchors): every row the head names was on disk."""

    ledger_id: str
    rows: int
    rounds: int
    head: str
    mac: str | None = None
    synced: int | None = None
    tail: tuple[int, int] = (0, 0)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "format": HEAD_FORMAT, "version": 1 if self.synced is None else HEAD_VERSION,
            "ledger_id": self.ledger_id, "rows": self.rows, "rounds": self.rounds,
            "head": self.head}
        if self.mac is not None:
            out["mac"] = self.mac
        if self.synced is not None:
            out["synced"] = self.synced
            out["tail"] = list(self.tail)
        return out

    @property
    def durable_rows(self) -> int:
        """The rows that were on disk in the database when this head was written."""
        return self.rows if self.synced is None else self.synced

    def with_journal(self, synced: int, tail: tuple[int, int] = (0, 0)) -> "HeadRecord":
        """This head as a version-2 record: rows ``1..synced`` on disk in the database, the
        rest in the journal bytes ``tail`` (``synced = rows``: every row on disk)."""
        return HeadRecord(self.ledger_id, self.rows, self.rounds, self.head, self.mac, synced,
                          tail)

    @classmethod
    def of(cls, ledger_id: str, chain: ChainHead, key: bytes | None) -> "HeadRecord":
        mac = (head_mac(key, ledger_id, rows=chain.rows, rounds=chain.rounds, head=chain.head)
               if key is not None else None)
        return cls(ledger_id, chain.rows, chain.rounds, chain.head, mac)


_SLOT = 512  # bytes per slot: one disk sector, so a torn write damages at most one slot
_DIGEST = "sha256"
_SORTED = json.JSONEncoder(sort_keys=True, separators=(",", ":"))  # canonical JSON
JOURNAL_START = 2 * _SLOT  # the journal area follows the two slots
JOURNAL_SIZE = 64 * 1024  # bytes; when the rows to journal do not fit, the database is synced


def _encode_slot(record: HeadRecord) -> bytes:
    body = _SORTED.encode(record.to_json())
    # = json.dumps({"record": record.to_json(), "sha256": …}, sort_keys=True, separators=…):
    # the body is already sorted and compact, and "record" sorts before "sha256"
    line = (f'{{"record":{body},"{_DIGEST}":"'
            f'{hashlib.sha256(body.encode("utf-8")).hexdigest()}"}}').encode("utf-8")
    if len(line) >= _SLOT:
        raise LedgerError(f"a head record does not fit in {_SLOT} bytes")
    return line + b"\n" + b" " * (_SLOT - len(line) - 2) + b"\n"


def _decode_slot(raw: bytes) -> HeadRecord | None:
    """The record in one slot, or None if the slot is empty or torn."""
    try:
        outer = json.loads(raw.decode("utf-8"))
        data = outer["record"]
        body = json.dumps(data, sort_keys=True, separators=(",", ":"))
        if hashlib.sha256(body.encode("utf-8")).hexdigest() != outer[_DIGEST]:
            return None
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
    if not isinstance(data, dict) or data.get("format") != HEAD_FORMAT \
            or data.get("version") not in HEAD_VERSIONS:
        return None
    rows, rounds, head, mac = data.get("rows"), data.get("rounds"), data.get("head"), data.get("mac")
    if not (isinstance(rows, int) and isinstance(rounds, int) and 0 <= rounds <= rows
            and isinstance(head, str) and len(head) == 64 and (mac is None or isinstance(mac, str))):
        return None
    try:
        bytes.fromhex(head)
    except ValueError:
        return None
    synced, tail = None, (0, 0)
    if data["version"] == 2:
        synced, span = data.get("synced"), data.get("tail")
        if not (isinstance(synced, int) and 0 <= synced <= rows and isinstance(span, list)
                and len(span) == 2 and all(type(x) is int for x in span)
                and 0 <= span[0] <= span[1] <= JOURNAL_SIZE):
            return None
        tail = (span[0], span[1])
    return HeadRecord(str(data.get("ledger_id")), rows, rounds, head, mac, synced, tail)


_DECODED: dict[bytes, HeadRecord | None] = {}  # raw slot → record: most writes find the
# slots as this process last wrote or read them, so the JSON and checksum need not be redone


def _decode_cached(raw: bytes) -> HeadRecord | None:
    try:
        return _DECODED[raw]
    except KeyError:
        record = _decode_slot(raw)
        if len(_DECODED) > 64:
            _DECODED.clear()
        _DECODED[raw] = record
        return record


def _slots(fd: int) -> list[HeadRecord | None]:
    data = os.pread(fd, 2 * _SLOT, 0)
    return [_decode_cached(data[i * _SLOT:(i + 1) * _SLOT].rstrip(b" \n\x00")) for i in (0, 1)]


def _newness(record: HeadRecord) -> tuple[int, int]:
    """Heads in the order they were written: by rows, then by rows synced in the database."""
    return record.rows, record.durable_rows


def _best(slots: list[HeadRecord | None]) -> HeadRecord | None:
    valid = [s for s in slots if s is not None]
    return max(valid, key=_newness) if valid else None


def read_head(path: Path) -> HeadRecord | None:
    """The head recorded in ``path`` (the valid slot with the most rows); ``None`` if there is
    no such file."""
    heads = read_heads(path)
    return heads[0] if heads else None


def read_heads(path: Path) -> list[HeadRecord]:
    """Every valid head recorded in ``path``, the newest first (one or two: the newest and the
    one before it, which a crash during the newest one's write falls back to); none if there is
    no such file.  A file without a valid head raises :class:`LedgerCorrupted`."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise LedgerError(f"cannot read the ledger head file {path}: {exc}") from None
    try:
        size = os.fstat(fd).st_size
        valid = ([s for s in _slots(fd) if s is not None]
                 if size <= JOURNAL_START + JOURNAL_SIZE else [])
    finally:
        os.close(fd)
    if size == 0:  # created by a writer's lock, no head recorded yet: as if absent
        return []
    if not valid:
        raise LedgerCorrupted(f"the ledger head file {path} is unreadable (no valid head "
                              "record); the spent budget is unknown")
    return sorted(valid, key=_newness, reverse=True)


def read_tail(path: Path, record: HeadRecord) -> list[bytes]:
    """The journal lines of ``record`` (rows ``synced+1..rows``, one stored row per line, as
    written by :class:`Journal`); lines that are torn or missing come back short or absent,
    which the chain check of the rows then refuses."""
    start, end = record.tail
    if record.synced is None or end <= start:
        return []
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return []
    try:
        data = os.pread(fd, end - start, JOURNAL_START + start)
    finally:
        os.close(fd)
    return data.split(b"\n")[:-1] if data.endswith(b"\n") else data.split(b"\n")


class Journal(Protocol):
    """What :func:`write_head` needs from the ledger to keep the journal: the stored rows
    after row ``after`` up to row ``upto``, each one encoded line — ``None`` if it no longer
    has them, or if they do not chain from ``after_hash`` (the current head's hash; ``None``:
    the genesis) to ``upto_hash`` — and a way to make every committed row durable in the
    database."""

    def rows_after(self, after: int, upto: int, *, after_hash: str | None,
                   upto_hash: str) -> list[bytes] | None: ...

    def sync(self) -> None: ...


def check_head(record: HeadRecord, path: Path, ledger_id: str, chain: ChainHead, *,
               hash_at: Callable[[int], str | None], key: bytes | None) -> None:
    """Raise :class:`LedgerCorrupted` unless the verified chain extends ``record``.
    ``hash_at(n)`` is the verified hash of row ``n`` (the genesis hash for ``n = 0``)."""
    if record.ledger_id != ledger_id:
        raise LedgerCorrupted(
            f"the head file {path} belongs to ledger {record.ledger_id}, not to {ledger_id} "
            "(a different ledger file was put in its place?); the spent budget is unknown")
    if key is not None:
        if record.mac is None or not hmac.compare_digest(
                record.mac, head_mac(key, record.ledger_id, rows=record.rows,
                                     rounds=record.rounds, head=record.head)):
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


@contextlib.contextmanager
def exclusive(path: Path, *, create: bool = True) -> Iterator[None]:
    """Hold the head file's exclusive lock — against this process's threads and other
    processes — around a whole write transaction.  Writers then queue in the kernel (woken as
    soon as the lock is free) instead of polling SQLite's lock, and the head they write after
    their commit is in commit order.  Inside, call :func:`write_head` with ``held=True``.

    ``create=False`` (only waiting for the writers in flight, e.g. while an open checks the
    heads): a missing head file is not created — no writer holds its lock, since a writer
    creates the file before it commits — and the body runs without the lock.  A read, or an
    open that fails, then leaves the directory as it found it."""
    if not create and not path.exists():
        yield
        return
    fd, created, lock = _open_head(path)
    with lock:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _HELD[str(path)] = fd
        try:
            yield
        finally:
            del _HELD[str(path)]
            fcntl.flock(fd, fcntl.LOCK_UN)
    if created:
        fsync_dir(path.parent)


def write_head(path: Path, record: HeadRecord, *, force: bool = False, sync: bool = True,
               held: bool = False, journal: Journal | None = None) -> bool:
    """Record ``record`` in ``path`` unless it already records as many rows or more (``force``
    replaces both slots anyway: ``odp ledger reanchor``).  Returns whether it wrote.

    The file holds two 512-byte slots, each a checksummed record; a write goes to the slot
    that does not hold the current head and is made durable with one ``fdatasync`` (the
    directory is ``fsync``-ed once, when the file is created).  A crash mid-write leaves the
    other slot — the previous head, a prefix of the ledger — intact.  An exclusive ``flock``
    on the file serialises writers, so the head never moves back.  ``sync=False`` skips the
    ``fdatasync``: the head then survives a crash of the process but may fall back to an
    older one (still a prefix) on power loss.  ``held``: the caller holds :func:`exclusive`.

    ``journal``: the rows the head names need not be on disk in the database yet (SQLite
    committed them without a flush); the head file then keeps them itself.  The rows added since
    the current head are appended to the journal area (never over bytes the current head
    refers to) and the new slot names them, so the one ``fdatasync`` makes both the rows and
    the head durable.  When the rows do not fit (or the ledger no longer has them),
    ``journal.sync()`` flushes the database first and the journal starts again empty."""
    if held:
        return _write_locked(_HELD[str(path)], record, force=force, sync=sync, journal=journal,
                             flock=False)
    fd, created, lock = _open_head(path)
    with lock:
        wrote = _write_locked(fd, record, force=force, sync=sync, journal=journal)
    if created:
        fsync_dir(path.parent)
    return wrote


#: Open head files, kept across writes (one open/close less per commit): path → (pid, file
#: identity, fd, lock).  A file replaced or deleted meanwhile is reopened by path; a forked
#: child opens its own (a shared open file would share the parent's flock).
_OPEN: dict[str, tuple[int, tuple[int, int], int, threading.Lock]] = {}
_OPEN_LOCK = threading.Lock()
#: The head files whose :func:`exclusive` lock a thread holds (path → fd): only that thread
#: uses the entry, since the path's threading lock is held with it.
_HELD: dict[str, int] = {}


def _open_head(path: Path) -> tuple[int, bool, threading.Lock]:
    key = str(path)
    with _OPEN_LOCK:
        try:
            st = os.stat(path)
            ident = (st.st_dev, st.st_ino)
        except FileNotFoundError:
            ident = None
        entry = _OPEN.get(key)
        if entry is not None and entry[0] == os.getpid() and entry[1] == ident:
            return entry[2], False, entry[3]
        if entry is not None and entry[0] == os.getpid():
            os.close(entry[2])
        if len(_OPEN) >= 64:  # bound the open files: close the idle ones of this process
            for other, (pid, _, ofd, olock) in list(_OPEN.items()):
                if pid == os.getpid() and other != key and olock.acquire(blocking=False):
                    os.close(ofd)
                    del _OPEN[other]
                    olock.release()
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        st = os.fstat(fd)
        _OPEN[key] = (os.getpid(), (st.st_dev, st.st_ino), fd, threading.Lock())
        return fd, ident is None, _OPEN[key][3]


def _write_locked(fd: int, record: HeadRecord, *, force: bool, sync: bool,
                  journal: Journal | None, flock: bool = True) -> bool:
    try:
        if flock:
            fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        slots: list[HeadRecord | None] = _slots(fd) if size else [None, None]
        current = _best(slots)
        if not force and current is not None and (
                current.rows > record.rows or (current.rows == record.rows and (
                    journal is not None or current.durable_rows >= record.durable_rows))):
            return False  # never back; the same rows again only to record them as synced
        if journal is not None and not force:
            record = _journaled(fd, record, size=size, current=current, journal=journal)
        data = _encode_slot(record)
        if len(_DECODED) > 64:
            _DECODED.clear()
        _DECODED[data.rstrip(b" \n\x00")] = record
        if force:
            os.pwrite(fd, data + data, 0)
        else:  # replace the slot that does not hold the current head
            target = 0 if current is None or slots[1] is current else 1
            os.pwrite(fd, data, target * _SLOT)
        if sync:
            os.fdatasync(fd)
    finally:
        if flock:
            fcntl.flock(fd, fcntl.LOCK_UN)
    return True


def _journaled(fd: int, record: HeadRecord, *, size: int, current: HeadRecord | None,
               journal: Journal) -> HeadRecord:
    """``record`` with its journal: append the rows since ``current`` after ``current``'s tail
    (bytes ``current`` refers to are never overwritten, so a crash before the new slot is
    durable leaves ``current`` whole), or sync the database and start the journal empty."""
    if current is None:
        after, synced, start, end = 0, 0, 0, 0
    else:
        after, synced = current.rows, current.durable_rows
        start, end = current.tail if current.synced is not None else (0, 0)
    if start == end:
        start = end = 0
    lines = journal.rows_after(after, record.rows, after_hash=None if current is None
                               else current.head, upto_hash=record.head)
    added = b"".join(lines) if lines is not None else b""
    if lines is None or end + len(added) > JOURNAL_SIZE:
        journal.sync()
        return record.with_journal(record.rows)
    if size < JOURNAL_START + JOURNAL_SIZE:  # allocate the area once (a later fdatasync then
        os.pwrite(fd, b"\0" * (JOURNAL_START + JOURNAL_SIZE - max(size, JOURNAL_START)),
                  max(size, JOURNAL_START))  # flushes data only, no block allocation)
    os.pwrite(fd, added, JOURNAL_START + end)
    return record.with_journal(synced, (start, end + len(added)))


def fsync_dir(directory: Path) -> None:
    """``fsync`` a directory, so that a file created in it keeps its name after a power loss."""
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
