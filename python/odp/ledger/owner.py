"""Who holds a reservation: a process token (host, pid, start time) and the test of whether
that process is gone, used to recover reservations of crashed processes at their sup."""

from __future__ import annotations

import os
import socket
from typing import Any


def process_start(pid: int) -> str | None:
    """Start time of ``pid`` in clock ticks since boot (Linux), '' for a zombie, None if gone
    or unknown."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    rest = data[data.rfind(")") + 2:].split()
    if rest and rest[0] in ("Z", "X"):
        return ""  # zombie / dead: it will never settle
    return rest[19] if len(rest) > 19 else None


def owner_token() -> dict[str, Any]:
    pid = os.getpid()
    return {"host": socket.gethostname(), "pid": pid, "start": process_start(pid)}


def owner_is_dead(owner: dict[str, Any]) -> bool:
    """True only when we are sure the reserving process is gone (same host)."""
    if owner.get("host") != socket.gethostname():
        return False
    pid = owner.get("pid")
    if not isinstance(pid, int):
        return False
    start = process_start(pid)
    if start is None:
        if not os.path.exists("/proc/self/stat"):  # no procfs: fall back to kill(pid, 0)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
            except OSError:
                return False
            return False
        return True
    if start == "":
        return True
    recorded = owner.get("start")
    return recorded is not None and recorded != start
