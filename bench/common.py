"""What the benchmark scripts share: timing (wall and CPU time), formatting, installed peers and
the machine.  ``bench/compare.py`` and ``bench/dpsgd.py`` both import this module and not each
other.

Every timed cell reports its **wall** time (``time.perf_counter``) and its **CPU** time
(``time.process_time``: user + system time of the process that ran it — for a cell run in a
forked child, the child's own).  On a shared machine wall time includes waiting for the other
processes; CPU time is what an idle machine would need, so ratios between libraries are quoted
in CPU time.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import os
import platform
import statistics
import time
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, NamedTuple

ROOT = Path(__file__).resolve().parents[1]


def version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


PEERS = {name: version(dist) for name, dist in [
    ("OpenDP", "opendp"), ("dp-accounting", "dp-accounting"),
    ("prv-accountant", "prv-accountant"), ("diffprivlib", "diffprivlib")]}


#: Modules of the peers, imported once by :func:`preload_peers` in the parent process, so that
#: a forked cell does not time their import (seconds for dp-accounting) as its first run.
PEER_MODULES = ("dp_accounting", "dp_accounting.pld.pld_privacy_accountant",
                "dp_accounting.pld.privacy_loss_distribution",
                "dp_accounting.rdp.rdp_privacy_accountant", "dp_accounting.mechanism_calibration",
                "prv_accountant", "opendp.prelude", "diffprivlib.accountant")


def preload_peers() -> None:
    """Import the installed peers' modules now (before cells are forked)."""
    import importlib

    for name in PEER_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # not installed, or broken: its cells say so when they run
            pass


class Timing(NamedTuple):
    """A timed cell: median ``wall`` and ``cpu`` seconds (``None``: it failed or was stopped),
    the last result, how many runs the medians are of, and a note (why it failed)."""

    wall: float | None
    cpu: float | None
    out: Any
    runs: int
    note: str


def _once(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    c, w = time.process_time(), time.perf_counter()
    out = fn()
    return time.perf_counter() - w, time.process_time() - c, out


def median_runs(fn: Callable[[], Any], repeats: int) -> tuple[float, float, Any, int]:
    """Median wall and CPU time of ``repeats`` runs after one warm-up run (imports, caches), for
    every library alike; short cells (under 0.2 s) take the median of at least 11 runs, and a
    cell whose warm-up took over 2 s is timed by that run alone."""
    wall, cpu, out = _once(fn)
    if wall > 2 or repeats <= 1:
        return wall, cpu, out, 1
    if wall < 0.2:
        repeats = max(repeats, 11)
    walls, cpus = [], []
    for _ in range(repeats):
        w, c, out = _once(fn)
        walls.append(w)
        cpus.append(c)
    return statistics.median(walls), statistics.median(cpus), out, repeats


def _child(conn, fn, repeats):
    try:
        conn.send(("ok",) + median_runs(fn, repeats))
    except BaseException as exc:  # report, never hang the parent
        conn.send(("error", f"{type(exc).__name__}: {str(exc)[:200]}"))
    finally:
        conn.close()


def run_cell(fn: Callable[[], Any], repeats: int, timeout: float | None = None) -> Timing:
    """Time ``fn``; with ``timeout`` it runs in a forked child (its CPU time is the child's)."""
    if timeout is None:
        wall, cpu, out, n = median_runs(fn, repeats)
        return Timing(wall, cpu, out, n, "")
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, fn, repeats))
    proc.start()
    child.close()
    if parent.poll(timeout):
        msg = parent.recv()
        proc.join()
        if msg[0] == "ok":
            return Timing(msg[1], msg[2], msg[3], msg[4], "")
        return Timing(None, None, None, 0, msg[1])
    proc.kill()
    proc.join()
    return Timing(None, None, None, 0, f"stopped after {timeout:.0f} s")


def fmt_s(s: float | None) -> str:
    if s is None:
        return "–"
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def fmt_t(t: Timing) -> str:
    """``wall (CPU cpu)``."""
    if t.wall is None:
        return "–"
    return f"{fmt_s(t.wall)} (CPU {fmt_s(t.cpu)})"


def fmt_x(x: float | None, digits: int = 6) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x:.{digits}g}"


def ratio(peer: Timing, base: Timing) -> str:
    """Peer CPU time / odp CPU time."""
    if peer.cpu is None or base.cpu is None or base.cpu <= 0:
        return "–"
    return f"{peer.cpu / base.cpu:.1f}×"


def machine() -> dict[str, Any]:
    cpu = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "load": os.getloadavg()}
