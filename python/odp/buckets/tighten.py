"""More buckets until the interval is narrow enough: an automatic speed/width trade-off.

The interval ``[lower, upper]`` of privacy buckets narrows as the window grows: with the default
split rounding the discretisation error is second order in the grid step ``h``, so 4× more
buckets make it about 16× narrower, until the round-off of the FFTs (absolute, ~1e-16 relative to
the largest entries, amplified by the remaining compositions) dominates; extended precision then
lowers that floor.  Time grows about linearly with the buckets (``n log n``).

:func:`tighten` starts at ``buckets`` and multiplies them by 4 — or, with ``buckets="auto"``,
for ε(δ) starts at the grid step :mod:`odp.buckets.predict` predicts from one run's buckets
(and shrinks it by the same law after a miss), else at :data:`START_BUCKETS` growing by the
factor the second-order law predicts — while
the width is above ``target_width`` and the next attempt fits the limits (:mod:`odp.limits`,
counting the time already spent); when a larger window stops halving the width it retries the
same window in extended
precision and stops there (more buckets only add round-off beyond that point), reporting the
floor.  An infinite width is retried in extended precision at once (more buckets cannot lower the
mass at infinite loss); a window whose grid step did not get finer is reported as such.  It never returns a looser interval than the best
attempt, and it says whether the target was reached and, if not, why.  docs/buckets.md has the
measured trade-off.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Sequence

from ..errors import InvalidBudget, InvalidParameter
from ..limits import Limits, format_seconds
from ..progress import ProgressArg
from .accountant import DEFAULT_BUCKETS, DEFAULT_TAIL_MASS, Interval, PrivacyBucketsAccountant
from .mechanisms import as_sequence
from .predict import predict_step

__all__ = ["Attempt", "TightenResult", "tighten", "MAX_TIGHTEN_BUCKETS", "START_BUCKETS"]

#: The first window :func:`tighten` tries when no ``buckets`` is given.
START_BUCKETS = 4096

#: The largest window :func:`tighten` tries (about 13 GiB at the measured 800 B per bucket, so
#: the memory limit normally stops it first).
MAX_TIGHTEN_BUCKETS = 2**24

#: A predicted grid step aims at this share of the target width (the prediction is of the
#: first rounding only; later coarsenings and the tails add a few per cent).
PREDICTION_SAFETY = 0.75

#: With a predicted window for ε(δ), the tails cut per fit (``tail_mass``) are chosen so that
#: all of them together — about ``3·k·tail_mass`` added to δ's upper bound for ``k`` runs (each
#: fitted state of ``c`` runs is used ``k/c`` times) — move ε by at most this share of the
#: target width: by the Chernoff slope ``d ln δ/dε ≈ −θ*`` that is ``tail_mass =
#: TAIL_WIDTH_SHARE·W·θ*·δ/(3k)``, kept between :data:`MIN_AUTO_TAIL` and
#: :data:`MAX_AUTO_TAIL` (below the default 1e-16 for a tiny δ, where the default's cuts alone
#: would move ε by more than that).
TAIL_WIDTH_SHARE = 0.05
MIN_AUTO_TAIL = 1e-30
MAX_AUTO_TAIL = 1e-12


@dataclass(frozen=True)
class Attempt:
    buckets: int
    precision: str
    interval: Interval
    seconds: float

    @property
    def width(self) -> float:
        return self.interval.width

    def to_json(self) -> dict[str, Any]:
        return {"buckets": self.buckets, "precision": self.precision,
                "interval": self.interval.to_json(), "width": self.width,
                "seconds": round(self.seconds, 4)}


@dataclass
class TightenResult:
    """The narrowest interval found (``interval``, from ``accountant``), every attempt, and
    whether ``width <= target_width`` (``reached``; if not, ``reason`` says why)."""

    interval: Interval
    accountant: PrivacyBucketsAccountant
    target_width: float
    reached: bool
    reason: str
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return sum(a.seconds for a in self.attempts)

    def to_json(self) -> dict[str, Any]:
        return {"target_width": self.target_width, "reached": self.reached,
                "reason": self.reason, "attempts": [a.to_json() for a in self.attempts],
                "seconds": round(self.seconds, 4)}


def tighten(
    mechanisms: Sequence[Any],
    *,
    target_width: float,
    delta: Any = None,
    epsilon: Any = None,
    buckets: int | str = DEFAULT_BUCKETS,
    precision: str = "auto",
    limits: Limits | None = None,
    progress: ProgressArg = None,
    **options: Any,
) -> TightenResult:
    """Compose ``mechanisms`` (``PLDMechanism`` or ``(PLDMechanism, count)`` items) with growing
    windows until the interval of ε(``delta``) -- or δ(``epsilon``) -- is at most
    ``target_width`` wide (see the module docstring).  ``options`` go to
    :class:`PrivacyBucketsAccountant` (``factor``, ``tail_mass``, ``rounding``).

    ``buckets``: the first window; the window then grows 4× per attempt.  With ``"auto"`` and a
    ``delta`` query the grid step is predicted from one run's buckets
    (:func:`odp.buckets.predict.predict_step`: the width is second order in the step ``h`` of
    the first rounding) for :data:`PREDICTION_SAFETY` of the target, the window is sized to
    hold one run's loss range on that grid (``factor = e^h``), and the tails cut per fit are
    sized from δ (:data:`TAIL_WIDTH_SHARE`; unless ``tail_mass`` is given); a miss shrinks the step
    by the same law.  Otherwise (an ``epsilon`` query, a lattice mechanism, a ``factor``
    given) ``"auto"`` starts at :data:`START_BUCKETS` and predicts each next window from the
    same law: the smallest ``2^d`` times the window with ``width / 4^d <= target``, at least 2×
    and at most 16×."""
    if (delta is None) == (epsilon is None):
        raise InvalidParameter("give exactly one of delta (for epsilon(delta)) or epsilon")
    try:
        target = float(target_width)
    except (TypeError, ValueError):
        raise InvalidParameter(f"target width must be a number, got {target_width!r}") from None
    if not (target > 0 and math.isfinite(target)):
        raise InvalidParameter(f"target width must be a finite number > 0, got {target_width!r}")
    items = as_sequence(list(mechanisms))
    if not items:
        raise InvalidParameter("mechanisms must not be empty")
    limits = limits if limits is not None else Limits()
    attempts: list[Attempt] = []
    steps: list[float] = []  # the grid step of each attempt
    best: tuple[Interval, PrivacyBucketsAccountant] | None = None
    predict = buckets == "auto"
    if not predict and (isinstance(buckets, (bool, str)) or not isinstance(buckets, int)):
        raise InvalidParameter(f"buckets must be an integer or 'auto', got {buckets!r}")
    n, prec, spent = (START_BUCKETS if predict else int(buckets)), precision, 0.0
    step = None  # the predicted grid step (then the window holds one run's losses on it)
    tried: list[float] = []  # the predicted steps of the attempts
    attempt_options = dict(options)
    if predict and delta is not None and "factor" not in options:
        planned = _plan(items, delta, target, options)
        if planned is not None:
            n, step, attempt_options = planned
    reason = ""
    floor_retry = False  # the last attempt re-ran the previous window in extended precision
    while True:
        if step is not None:
            attempt_options["factor"] = Fraction(math.exp(step))
            tried.append(step)
        acc = PrivacyBucketsAccountant(buckets=n, precision=prec, limits=limits,
                                       progress=progress, **attempt_options)
        for mech, count in items:
            acc.compose(mech, count)
        est = acc.estimate()
        if attempts:  # the first attempt is checked (and refused) by the accountant itself
            if est.memory > limits.memory or spent + est.seconds > limits.seconds:
                option = (limits.memory_option if est.memory > limits.memory
                          else limits.seconds_option)
                reason = (f"the next attempt ({n} buckets, {prec} precision, {est.describe()}) "
                          f"would exceed {option} (already spent {format_seconds(spent)}); "
                          "raise it to go further")
                break
        t0 = time.perf_counter()
        iv = acc.get_epsilon_interval(delta) if delta is not None else \
            acc.get_delta_interval(epsilon)
        used = acc.effective_precision  # "auto" may have switched to extended by itself
        attempt = Attempt(n, used, iv, time.perf_counter() - t0)
        spent += attempt.seconds
        attempts.append(attempt)
        steps.append(min(s.h for s in acc._answered_states()))
        if used == "extended":
            prec = "extended"
        if best is None or attempt.width < best[0].width:
            best = (iv, acc)
        if attempt.width <= target:
            reason = "target reached"
            break
        if floor_retry:
            reason = ("the width stopped shrinking with more buckets and extended precision was "
                      "the last step (FFT round-off floor); a smaller target needs another method")
            break
        if not math.isfinite(attempt.width):
            # the upper end is infinite: more buckets cannot change the mass at infinite loss,
            # but extended precision lowers the round-off bound that may keep it there
            if used != "extended":
                prec = "extended"
                continue
            reason = ("the upper end stays infinite in extended precision, so more buckets "
                      f"cannot help: {acc.no_finite_epsilon_reason(delta)}")
            break
        expected = 2.0 if step is None or len(tried) < 2 else max(
            1.0, (tried[-2] / tried[-1]) ** 2 / 2)
        if len(attempts) >= 2 and not attempt.width <= attempts[-2].width / expected:
            # 2x-16x more buckets did not halve the width (or a predicted finer step did not
            # give half its predicted gain)
            if steps[-1] >= steps[-2]:
                reason = (f"the grid did not get finer with more buckets (step h = "
                          f"{steps[-1]:.3g} both times: the composed loss range needs that step, "
                          "or a lattice mechanism pins it); more buckets cannot narrow it")
                break
            if used != "extended":  # round-off, not the grid, dominates
                prec = "extended"
                floor_retry = True
                continue
            reason = ("the width stopped shrinking (FFT round-off floor even in extended "
                      "precision); a smaller target needs another method")
            break
        if step is not None:  # the same law from this attempt's own width
            finer = step * min(max(math.sqrt(PREDICTION_SAFETY * target / attempt.width),
                                   0.25), 0.8)
            grown = math.ceil(n * step / finer)
            if grown > MAX_TIGHTEN_BUCKETS:
                reason = f"reached the largest window tried ({MAX_TIGHTEN_BUCKETS} buckets)"
                break
            n, step = grown, finer
            continue
        grow = 4
        if predict:
            grow = 2
            while grow < 16 and attempt.width / (grow * grow) > target:
                grow *= 2
        if n * grow > MAX_TIGHTEN_BUCKETS:
            reason = f"reached the largest window tried ({MAX_TIGHTEN_BUCKETS} buckets)"
            break
        n *= grow
    assert best is not None
    return TightenResult(best[0], best[1], target, best[0].width <= target, reason, attempts)


def _plan(items: list[tuple[Any, int]], delta: Any, target: float,
          options: dict[str, Any]) -> tuple[int, float, dict[str, Any]] | None:
    """``(buckets, grid step, accountant options)`` of a predicted first attempt for ε(δ), or
    ``None`` when no prediction can be made (then ``"auto"`` grows windows as before)."""
    from ..budget import parse_delta

    try:
        d = float(parse_delta(delta))
    except (InvalidBudget, InvalidParameter):  # the accountant reports a bad δ itself
        return None
    if not 0 < d < 1:
        return None
    out = dict(options)
    try:
        pred = predict_step(items, d, out.get("tail_mass", DEFAULT_TAIL_MASS))
    except (InvalidParameter, ValueError, ArithmeticError, FloatingPointError):
        return None
    if pred is None:
        return None
    if "tail_mass" not in out:
        total = sum(count for _, count in items)
        out["tail_mass"] = max(MIN_AUTO_TAIL, min(
            MAX_AUTO_TAIL, TAIL_WIDTH_SHARE * target * pred.theta * d / (3 * total)))
    tail = out["tail_mass"]
    h = pred.step_for(PREDICTION_SAFETY * target)
    if not (math.isfinite(h) and h > 0):
        return None
    span = 0.0
    for mech, _ in items:
        lo, hi = mech.loss_range(pred.reverse and not mech.symmetric, tail)
        span = max(span, hi - lo)
    if not math.isfinite(span):
        return None
    n = max(START_BUCKETS // 4, math.ceil(span / h) + 8)
    if n > MAX_TIGHTEN_BUCKETS:
        return None
    out.setdefault("dominant", pred.reverse)
    return n, h, out
