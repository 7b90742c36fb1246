"""Up-front cost estimates for long computations, and the limits that refuse absurd sizes.

Every entry point that can run long (privacy buckets, OptDel, Table 1, the figures, the demo)
first builds an :class:`Estimate` of its peak memory and running time from its parameters alone,
then calls :meth:`Limits.check`, which raises :class:`ResourceLimitExceeded` -- naming the limit,
the estimate and the option that raises it -- *before* any work or allocation.

Defaults (stated in the docs): at most :data:`DEFAULT_MAX_MEMORY` (4 GiB) of working memory and
:data:`DEFAULT_MAX_SECONDS` (10 minutes) of estimated time.  Time estimates are calibrated on a
2-core machine of 2024 and are rough (within a factor of about 3); memory estimates are peak
working-set bounds measured the same way.  On the command line the options are
``--max-memory SIZE`` (``8G``, ``512M``, a bare number is GiB, ``inf`` for no limit) and
``--max-seconds SECONDS``; in the API the parameters ``max_memory`` (bytes or the same strings)
and ``max_seconds``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from .errors import InvalidParameter

__all__ = [
    "DEFAULT_MAX_MEMORY",
    "DEFAULT_MAX_SECONDS",
    "Estimate",
    "Limits",
    "ResourceLimitExceeded",
    "format_bytes",
    "format_seconds",
    "parse_memory",
    "parse_seconds",
]

GIB = 2**30

#: Default limit on the estimated peak working memory of one computation (bytes).
DEFAULT_MAX_MEMORY = 4 * GIB

#: Default limit on the estimated running time of one computation (seconds).
DEFAULT_MAX_SECONDS = 600.0


class ResourceLimitExceeded(InvalidParameter):
    """The estimated memory or time of a computation exceeds its limit; nothing was computed.

    ``estimate`` is the :class:`Estimate`, ``limit`` the limit that was exceeded and ``option``
    the flag or parameter that raises it."""

    def __init__(self, message: str, *, estimate: "Estimate", limit: float, option: str):
        super().__init__(message)
        self.estimate = estimate
        self.limit = limit
        self.option = option


def format_bytes(n: float) -> str:
    """``1.5 GiB``, ``300 MiB``, ``12 KiB``, ``inf``."""
    if not math.isfinite(n):
        return "unlimited"
    for unit, size in (("TiB", 2**40), ("GiB", GIB), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            value = n / size
            return f"{value:.3g} {unit}" if value < 1000 else f"{value:,.0f} {unit}"
    return f"{int(n)} B"


def format_seconds(s: float) -> str:
    """``0.4 s``, ``12 s``, ``8 min``, ``3.2 h``, ``40 days``."""
    if not math.isfinite(s):
        return "unlimited"
    if s < 100:
        return f"{s:.2g} s"
    if s < 6000:
        return f"{s / 60:.3g} min"
    if s < 172_800:
        return f"{s / 3600:.3g} h"
    days = s / 86_400
    return f"{days:.3g} days" if days < 1000 else f"{days:.2e} days"


_SUFFIX = {"": GIB, "k": 2**10, "m": 2**20, "g": GIB, "t": 2**40}


def parse_memory(value: Any, *, name: str = "max_memory") -> float:
    """Bytes from an int (bytes) or a string ``"8G"``, ``"512MiB"``, ``"2.5"`` (GiB), ``"inf"``."""
    if isinstance(value, bool):
        raise InvalidParameter(f"{name} must be a size such as 8G or 512M, got {value!r}")
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an int beyond a float
            raise InvalidParameter(f"{name} {value!r} is too large to be a size (beyond a "
                                   "float); give inf for no limit") from None
        if math.isnan(number) or number <= 0:
            raise InvalidParameter(f"{name} must be > 0, got {value!r}")
        return number
    text = str(value).strip().lower()
    if text in ("inf", "none", "unlimited"):
        return math.inf
    m = re.fullmatch(r"([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([kmgt]?)(?:i?b)?", text)
    if not m:
        raise InvalidParameter(
            f"{name} must be a size such as 8G, 512M or 2.5 (GiB), or inf; got {value!r}")
    number = float(m.group(1)) * _SUFFIX[m.group(2)]
    if not math.isfinite(number):
        raise InvalidParameter(f"{name} {value!r} is too large to be a size (beyond a float); "
                               "give inf for no limit")
    if not number > 0:
        raise InvalidParameter(f"{name} must be > 0, got {value!r}")
    return number


def parse_seconds(value: Any, *, name: str = "max_seconds") -> float:
    """Seconds from a number or a string (``"inf"`` for no limit)."""
    if isinstance(value, bool):
        raise InvalidParameter(f"{name} must be a number of seconds, got {value!r}")
    if isinstance(value, str) and (not value.isascii() or "_" in value):  # float() reads both
        raise InvalidParameter(f"{name} must be a number of seconds such as 600 or 2.5, or inf; "
                               f"got {value!r}")
    try:
        number = float(value)
    except OverflowError:  # an int beyond a float
        raise InvalidParameter(f"{name} {value!r} is too large to be a number of seconds "
                               "(beyond a float); give inf for no limit") from None
    except (TypeError, ValueError):
        raise InvalidParameter(f"{name} must be a number of seconds or inf, got {value!r}") from None
    if math.isnan(number) or number <= 0:
        raise InvalidParameter(f"{name} must be > 0, got {value!r}")
    if math.isinf(number) and not (isinstance(value, (int, float)) or str(value).strip().lower()
                                   in ("inf", "+inf", "infinity", "+infinity")):
        raise InvalidParameter(f"{name} {value!r} is too large to be a number of seconds "
                               "(beyond a float); give inf for no limit")
    return number


@dataclass(frozen=True)
class Estimate:
    """Estimated cost of one computation: ``seconds`` of running time on one core and peak
    working ``memory`` in bytes.  ``what`` describes the computation for messages; ``knobs``
    names the parameters that drive the cost (shown when it is refused)."""

    what: str
    seconds: float
    memory: float
    knobs: str = ""

    def __add__(self, other: "Estimate") -> "Estimate":
        return Estimate(self.what, self.seconds + other.seconds, max(self.memory, other.memory),
                        self.knobs or other.knobs)

    def describe(self) -> str:
        return f"about {format_seconds(self.seconds)} and {format_bytes(self.memory)}"

    def to_json(self) -> dict[str, Any]:
        return {"what": self.what, "seconds": self.seconds, "memory_bytes": self.memory}


@dataclass(frozen=True)
class Limits:
    """Limits on the estimated memory and time of one computation.

    ``memory_option`` / ``seconds_option`` are the names shown in the refusal message: the API
    parameters by default, the command-line flags when the CLI builds the limits.
    """

    max_memory: Any = DEFAULT_MAX_MEMORY
    max_seconds: Any = DEFAULT_MAX_SECONDS
    memory_option: str = "max_memory"
    seconds_option: str = "max_seconds"
    _parsed: tuple[float, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        mem = parse_memory(self.max_memory, name=self.memory_option)
        sec = parse_seconds(self.max_seconds, name=self.seconds_option)
        object.__setattr__(self, "_parsed", (mem, sec))

    @property
    def memory(self) -> float:
        return self._parsed[0]

    @property
    def seconds(self) -> float:
        return self._parsed[1]

    @classmethod
    def coerce(cls, limits: "Limits | None" = None, **overrides: Any) -> "Limits":
        """``limits`` or the defaults, with ``max_memory``/``max_seconds`` overrides that are
        not ``None``."""
        base = limits if limits is not None else cls()
        kw = {k: v for k, v in overrides.items() if v is not None}
        if not kw:
            return base
        return cls(kw.get("max_memory", base.max_memory), kw.get("max_seconds", base.max_seconds),
                   base.memory_option, base.seconds_option)

    def check(self, estimate: Estimate) -> Estimate:
        """Raise :class:`ResourceLimitExceeded` if ``estimate`` exceeds a limit; else return it."""
        knobs = f" ({estimate.knobs})" if estimate.knobs else ""
        if estimate.memory > self.memory:
            raise ResourceLimitExceeded(
                f"{estimate.what} would need about {format_bytes(estimate.memory)} of memory"
                f"{knobs}, more than the limit of {format_bytes(self.memory)}; reduce the size, "
                f"or raise the limit with {self.memory_option} (nothing was computed)",
                estimate=estimate, limit=self.memory, option=self.memory_option)
        if estimate.seconds > self.seconds:
            raise ResourceLimitExceeded(
                f"{estimate.what} would take about {format_seconds(estimate.seconds)}{knobs}, "
                f"more than the limit of {format_seconds(self.seconds)}; reduce the size, or "
                f"raise the limit with {self.seconds_option} (nothing was computed)",
                estimate=estimate, limit=self.seconds, option=self.seconds_option)
        return estimate


#: The limits used by the command line: the same defaults, named by their flags.
def cli_limits(max_memory: Any = None, max_seconds: Any = None) -> Limits:
    return Limits(DEFAULT_MAX_MEMORY if max_memory is None else max_memory,
                  DEFAULT_MAX_SECONDS if max_seconds is None else max_seconds,
                  memory_option="--max-memory", seconds_option="--max-seconds")
