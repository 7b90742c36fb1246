"""Progress reporting for long computations: a tqdm bar on a terminal, or a callback.

Every long entry point takes ``progress``:

* ``None`` or ``True`` (the default): a progress bar on standard error **if standard error is a
  terminal**; nothing otherwise (pipes, files, notebooks' captured streams, CI logs).  The bar
  appears only after half a second, so quick calls print nothing, and it is erased when done.
  A long call made while another bar is open (e.g. the OptDel cross-checks inside Table 1)
  draws none of its own.
* ``False``: nothing.
* a callable ``progress(done, total)``: called after each unit of work (no bar).

The command line passes ``False`` under ``--json`` so machine-readable runs stay quiet.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Any, Callable, Union

__all__ = ["ProgressArg", "Reporter", "bar_wanted", "timed"]

ProgressArg = Union[bool, None, Callable[[int, int], Any]]

#: seconds before a bar is drawn (quick work prints nothing)
BAR_DELAY = 0.5

#: bars currently open: a long call made inside another one's bar draws no bar of its own
_open_bars = 0


def bar_wanted(progress: ProgressArg) -> bool:
    """Whether ``progress`` asks for a terminal bar and standard error is a terminal."""
    if progress is False or callable(progress) or _open_bars > 0:
        return False
    stream = sys.stderr
    try:
        return bool(stream is not None and stream.isatty())
    except (AttributeError, ValueError):  # closed or replaced stream
        return False


class Reporter:
    """Counts ``done`` out of ``total`` units and reports them to ``progress`` (see the module
    docstring).  Use as a context manager; :meth:`advance` after each unit."""

    def __init__(self, progress: ProgressArg, total: int, desc: str, unit: str = "step"):
        self.total = max(int(total), 0)
        self.done = 0
        self._callback = progress if callable(progress) else None
        self._bar = None
        if bar_wanted(progress):
            from tqdm import tqdm

            self._bar = tqdm(total=self.total, desc=desc, unit=unit, file=sys.stderr,
                             leave=False, delay=BAR_DELAY, **_width())
            _opened(+1)

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self._bar is not None:
            self._bar.update(n)
        if self._callback is not None:
            self._callback(self.done, self.total)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
            _opened(-1)

    def __enter__(self) -> "Reporter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class timed:
    """A bar for work that cannot report its own steps: it advances with elapsed time against
    the *estimated* seconds (capped at 99% until the work ends) and is labelled ``(estimated)``.
    A callable ``progress`` gets ``(0, 1)`` at the start and ``(1, 1)`` at the end."""

    def __init__(self, progress: ProgressArg, seconds: float, desc: str):
        self._progress = progress
        self._seconds = max(float(seconds), 0.1)
        self._desc = desc
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._bar = None

    def __enter__(self) -> "timed":
        if callable(self._progress):
            self._progress(0, 1)
        elif bar_wanted(self._progress):
            from tqdm import tqdm

            self._bar = tqdm(total=100, desc=f"{self._desc} (estimated)", unit="%",
                             file=sys.stderr, leave=False, delay=BAR_DELAY, **_width(),
                             bar_format="{l_bar}{bar}| {elapsed} of ~" + _short(self._seconds))
            _opened(+1)
            self._thread = threading.Thread(target=self._tick, daemon=True)
            self._thread.start()
        return self

    def _tick(self) -> None:
        start = time.monotonic()
        shown = 0
        while not self._stop.wait(0.2):
            pct = min(99, int(100 * (time.monotonic() - start) / self._seconds))
            if pct > shown and self._bar is not None:
                self._bar.update(pct - shown)
                shown = pct

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._bar is not None:
            self._bar.close()
            _opened(-1)
        if callable(self._progress) and exc[0] is None:
            self._progress(1, 1)


def _width() -> dict[str, Any]:
    """Follow the terminal's size; a terminal that reports none (0 x 0, e.g. a fresh
    pseudo-terminal) gets 80 x 24, where tqdm would otherwise draw nothing."""
    import os

    try:
        size = os.get_terminal_size(sys.stderr.fileno())
    except (OSError, ValueError, AttributeError):
        size = os.terminal_size((0, 0))
    if size.columns > 0 and size.lines > 0:
        return {"dynamic_ncols": True}
    return {"ncols": 80, "nrows": 24}  # tqdm hides a bar on a terminal of 0 rows


def _opened(change: int) -> None:
    global _open_bars
    _open_bars += change


def _short(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f}s"
    return f"{seconds / 60:.0f}min"
