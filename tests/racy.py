"""Real odp filters with a widened race window, to show that a lock is needed (not a mock:
the filters decide and record exactly as the library's do).

:class:`PausedDecision` makes a filter's decision step (``_within``, called by
``continue_with`` between the check and the record) wait until a second caller has decided too
— a ``threading.Barrier`` of 2 — or until ``PATIENCE`` seconds have passed.  Under the filter's
lock (and a composition's launch lock) the second caller cannot reach its decision while the
first waits: the wait times out, the barrier stays broken, and the calls run one after the
other as usual.  Without the lock both callers decide on the same state before either records,
so a race that a missing lock allows only rarely happens every time.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from odp.filters import BasicFilter, RDPFilter, WhitehouseFilter, ZCDPFilter

#: Seconds the first caller waits for a second one (only spent when the lock works).
PATIENCE = 0.5


class PausedDecision:
    """Mixin (put it before a filter class): the decision of ``continue_with`` (and only that:
    ``admits_sequence`` and ``would_continue`` do not pause) waits at a barrier of 2."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.rendezvous = threading.Barrier(2, timeout=PATIENCE)
        self._in_continue = threading.local()

    def continue_with(self, cost: Any) -> bool:
        self._in_continue.active = True
        try:
            return super().continue_with(cost)  # type: ignore[misc, no-any-return]
        finally:
            self._in_continue.active = False

    def _within(self, state: Any) -> bool:
        decision = super()._within(state)  # type: ignore[misc]
        if getattr(self._in_continue, "active", False):
            try:
                self.rendezvous.wait()
            except threading.BrokenBarrierError:  # no second caller got here: serialised
                pass
        return decision

    @property
    def callers_met(self) -> bool:
        """Did two callers of ``continue_with`` reach the decision at the same time?"""
        return not self.rendezvous.broken


class PausedBasicFilter(PausedDecision, BasicFilter):
    pass


class PausedWhitehouseFilter(PausedDecision, WhitehouseFilter):
    pass


class PausedZCDPFilter(PausedDecision, ZCDPFilter):
    pass


class PausedRDPFilter(PausedDecision, RDPFilter):
    pass


def race(*calls: Callable[[], Any]) -> list[Any]:
    """Run ``calls`` in threads released together; each one's result or exception."""
    start = threading.Barrier(len(calls))
    out: list[Any] = [None] * len(calls)

    def run(i: int, call: Callable[[], Any]) -> None:
        start.wait()
        try:
            out[i] = call()
        except Exception as exc:  # noqa: BLE001 - returned to the test, which checks it
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out
