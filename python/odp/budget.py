"""Exact privacy budgets on :class:`fractions.Fraction`.

Every ε, δ, cost and remaining budget in odp is a ``Fraction``.  Inputs are parsed exactly:

* ``str``: ``"0.1"``, ``"1e-6"``, ``"1/3"`` (the decimal or ratio you wrote, exactly);
* ``int``, ``Fraction`` and other :class:`numbers.Rational` values (e.g. ``numpy.int64``);
* ``decimal.Decimal``: its exact value.

**Floats as privacy parameters.**  A float ε, δ, ρ, cost or budget total —
anything parsed by :func:`parse_epsilon` or :func:`parse_delta`, hence every :class:`Budget`,
``odp.DP``, ``odp.ODP`` cost and accountant total — is taken as
:func:`shortest_decimal_at_least` of it: the decimal with the fewest significant digits that is
**at least** the float's exact binary value and reads back as the same float.  So ``0.3``,
``1e-6`` and ``0.25`` mean exactly 0.3, 0.000001 and 0.25 (the decimal the float prints as is
not below its binary value), and ``0.1`` — whose binary value 0.1000000000000000055511… is
above the decimal 0.1 — means 0.10000000000000001.  A cost is thus never charged below the
float given, a budget total is exactly the number the ledger records and certifies, and ledgers
read as short decimals instead of ``3602879701896397/36028797018963968``.  The first time in a
process that a float means something other than the decimal it prints as (``0.1``), a
:class:`~odp.errors.FloatBudgetWarning` names the value used (once per process, not per call).
Pass a string (``"0.1"``) to mean a decimal exactly.  Floats of every width are handled this
way (``numpy.float32``: shortest for float32; ``numpy.longdouble``: for its own precision).

:func:`to_fraction` itself — used for data values and non-privacy parameters (a query result,
a clamp window, a probability vector) — keeps a float's **exact binary value**, with a
``FloatBudgetWarning`` unless ``warn=False``.

NaN, ±inf, negative values, δ ≥ 1, booleans and non-numbers raise
:class:`~odp.errors.InvalidBudget`.  Irrational costs are rounded *up*: see :mod:`odp.rational`.

**Display.**  :func:`format_fraction` is exact text (a decimal, else ``p/q``), used wherever a
value must be reproducible.  :func:`display_fraction` is what people read (``odp ledger show``,
``Budget.__repr__``): the exact decimal when it has at most :data:`DISPLAY_EXACT_DIGITS`
significant digits, else the value rounded to :data:`DISPLAY_ROUNDED_DIGITS` significant digits
**in the safe direction and marked**: ``≤0.333334`` for a cost (never shown below what it is),
``≥0.333333`` for a budget or what remains of one (never shown above it), followed by the exact
``(p/q)`` when that is short.  The exact values stay in every ``to_json``/``--json``.
"""

from __future__ import annotations

import decimal
import math
import numbers
import warnings
from fractions import Fraction
from typing import Any, Iterator

from .errors import FloatBudgetWarning, InvalidBudget, InvalidParameter
from .types import Number

__all__ = ["Budget", "to_fraction", "parse_epsilon", "parse_delta", "parse_positive",
           "parse_nonnegative", "parse_positive_int", "parse_alpha", "format_fraction",
           "shortest_decimal_at_least", "display_fraction", "display_named",
           "DISPLAY_EXACT_DIGITS",
           "DISPLAY_ROUNDED_DIGITS"]


def to_fraction(value: Any, *, name: str = "value", warn: bool = True) -> Fraction:
    """Parse ``value`` exactly into a finite ``Fraction`` (sign not checked).

    Raises :class:`InvalidBudget` for NaN, infinities, booleans and non-numeric input.  Floats
    of every width (``float``, ``numpy.float32``, ``numpy.longdouble``, …) give their exact
    binary value; ``warn=False`` suppresses the :class:`FloatBudgetWarning` (for data values).
    Privacy parameters are parsed with :func:`parse_epsilon` / :func:`parse_delta` instead,
    which round a float *up* to a short decimal (module docstring).
    """
    if isinstance(value, bool) or value is None:
        raise InvalidBudget(f"{name} must be a number, got {value!r}")
    if type(value) is Fraction:
        return value
    if isinstance(value, Fraction):  # a readable subclass (odp.readable): the plain number
        return Fraction(value.numerator, value.denominator)
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, str):
        text = value.strip()
        if not text.isascii():  # Fraction() would read '١' (Arabic-Indic one) as 1
            raise InvalidBudget(f"{name} must be written with ASCII digits such as '0.1', "
                                f"'1e-6' or '1/3', got {value!r}")
        if "_" in text:  # Fraction() would read '1_000' as 1000: a typo is not a budget
            raise InvalidBudget(f"{name} must be written without underscores, such as "
                                f"'1000', '0.1' or '1/3', got {value!r}")
        try:
            result = Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise InvalidBudget(
                f"{name} must be a finite number such as '0.1', '1e-6' or '1/3', got {value!r}"
            ) from None
        return result
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidBudget(f"{name} must be finite, got {value!r}")
        exact = Fraction(value)
        shown = repr(float(value))  # numpy's float64 repr is 'np.float64(…)'
        if warn and exact != Fraction(shown):
            warnings.warn(
                f"{name}={shown} is a float whose exact value is {exact} "
                f"(not {shown}); pass the string {shown!r} to mean the decimal exactly",
                FloatBudgetWarning,
                stacklevel=3,
            )
        return exact
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise InvalidBudget(f"{name} must be finite, got {value!r}")
        return Fraction(value)
    if isinstance(value, numbers.Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, numbers.Real):  # numpy.float32, numpy.longdouble, …: their exact value
        ratio = getattr(value, "as_integer_ratio", None)
        if callable(ratio):
            try:
                num, den = ratio()
            except (OverflowError, ValueError):
                raise InvalidBudget(f"{name} must be finite, got {value!r}") from None
            return Fraction(int(num), int(den))
        return to_fraction(float(value), name=name, warn=warn)
    raise InvalidBudget(f"{name} must be a number, got {type(value).__name__} {value!r}")


def _floor_log10(x: Fraction) -> int:
    """``⌊log10 |x|⌋`` for ``x ≠ 0``, exactly (integer arithmetic, any size)."""
    x = abs(x)
    e = len(str(x.numerator)) - len(str(x.denominator))
    while x < Fraction(10) ** e:
        e -= 1
    while x >= Fraction(10) ** (e + 1):
        e += 1
    return e


def _round_significant(x: Fraction, digits: int, up: bool) -> Fraction:
    """``x`` rounded to ``digits`` significant decimal digits, towards +inf if ``up`` else
    towards −inf (exact)."""
    if x == 0:
        return x
    unit = Fraction(10) ** (_floor_log10(x) - digits + 1)
    scaled = x / unit
    num, den = scaled.numerator, scaled.denominator
    n = -(-num // den) if up else num // den
    return n * unit


def _float_parts(value: Any) -> tuple[Fraction, str, Any] | None:
    """For a binary floating-point ``value`` (``float`` or a numpy float of any width): its exact
    value, the text it prints as, and a test ``reads_back(text) -> bool`` (does ``text`` parse to
    the same float of the same width?).  ``None`` for anything else.  Raises
    :class:`InvalidBudget` for NaN and infinities."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        x = float(value)  # numpy.float64 is a float subclass whose repr is 'np.float64(…)'
        if not math.isfinite(x):
            raise InvalidBudget(f"value must be finite, got {value!r}")
        return Fraction(x), repr(x), lambda text: float(text) == x
    if isinstance(value, numbers.Real) and not isinstance(value, (numbers.Rational,
                                                                   decimal.Decimal)):
        ratio = getattr(value, "as_integer_ratio", None)
        if not callable(ratio):
            return None
        try:
            num, den = ratio()
        except (OverflowError, ValueError):
            raise InvalidBudget(f"value must be finite, got {value!r}") from None
        kind: Any = type(value)  # a numpy float type: parses decimal text

        def reads_back(text: str) -> bool:
            try:
                return bool(kind(text) == value)
            except (TypeError, ValueError, OverflowError):
                return False

        return Fraction(int(num), int(den)), str(value), reads_back
    return None


def _scientific(x: Fraction) -> str:
    """A terminating decimal ``x`` as ``"<digits>e<exponent>"`` (parseable by ``float`` and by
    numpy's float types)."""
    if x == 0:
        return "0"
    e = 0
    while x.denominator != 1:
        x *= 10
        e -= 1
    n = x.numerator
    while n % 10 == 0:
        n //= 10
        e += 1
    return f"{n}e{e}"


def shortest_decimal_at_least(value: Any) -> Fraction:
    """The decimal with the fewest significant digits that is ``>=`` the exact binary value of
    the float ``value`` and reads back as the same float (``float(text) == value``; for a numpy
    float, the same float of its width).  Among decimals with that many digits, the smallest.

    ``0.3 → 0.3``, ``1e-6 → 0.000001`` and ``0.5 → 0.5`` (the shortest round-trip decimal —
    ``repr`` — is not below the float), but ``0.1 → 0.10000000000000001``, because the decimal
    0.1 is *below* the float 0.1 = 0.1000000000000000055511….  At most 18 significant digits
    for a ``float`` (17 round-trip, but the 17-digit decimal just above the float may read back
    as the next float; decimals of 18 digits are closer together than half a float spacing);
    the float's exact value itself always qualifies, so the search ends.

    Non-floats are returned exactly (:func:`to_fraction`)."""
    parts = _float_parts(value)
    if parts is None:
        return to_fraction(value, warn=False)
    exact, shown, reads_back = parts
    try:
        guess = Fraction(shown)
    except (ValueError, ZeroDivisionError):
        guess = None
    if guess is not None and guess >= exact and reads_back(shown):
        return guess  # repr's shortest round-trip decimal is already not below the float
    digits = 1
    while True:
        candidate = _round_significant(exact, digits, up=True)
        if candidate == exact or reads_back(_scientific(candidate)):
            return candidate
        digits += 1


def _long_decimal(x: Fraction, digits: int = 25) -> str:
    """A float's exact value as a decimal, cut after ``digits`` significant digits with "…"
    (for messages)."""
    with decimal.localcontext() as ctx:
        ctx.prec = 80
        text = str(decimal.Decimal(x.numerator) / decimal.Decimal(x.denominator))
    if "E" in text:
        return text
    significant = 0
    for i, ch in enumerate(text):
        if ch.isdigit() and (significant or ch != "0"):
            significant += 1
            if significant == digits and i + 1 < len(text):
                return text[:i + 1] + "…"
    return text


#: Has the once-per-process FloatBudgetWarning about a float privacy parameter been given?
_float_notice_given = False


def _warning_stacklevel() -> int:
    """The stacklevel of the first frame outside the odp package (so a warning points at the
    caller's line)."""
    import os
    import sys

    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame = sys._getframe(1)
    level = 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return level


def _privacy_number(value: Any, name: str) -> Fraction:
    """A privacy parameter (ε, δ, ρ, a cost, a budget): exact like :func:`to_fraction`, except
    that a float is :func:`shortest_decimal_at_least` it (module docstring).  The first float
    in a process that means something other than the decimal it prints as is reported with one
    :class:`FloatBudgetWarning`."""
    try:
        parts = _float_parts(value)
    except InvalidBudget:
        raise InvalidBudget(f"{name} must be finite, got {value!r}") from None
    if parts is None:
        return to_fraction(value, name=name)
    used = shortest_decimal_at_least(value)
    global _float_notice_given
    if not _float_notice_given:
        shown = parts[1]
        try:
            same = Fraction(shown) == used
        except (ValueError, ZeroDivisionError):
            same = False
        if not same:
            _float_notice_given = True
            ten = format_fraction(10 * Fraction(shown))
            warnings.warn(
                f"{name}={shown} is a float: its exact binary value "
                f"{_long_decimal(parts[0])} is above {shown}, so odp takes it as "
                f"{format_fraction(used)}, the shortest decimal not below it (rounded up, so "
                f"that no cost is understated).  Such values add up to more than the decimals "
                f"you typed: ten charges of {shown} do not fit in a budget of {ten}.  Pass the "
                f'string "{shown}" to mean {shown} exactly.  (Said once per process; every '
                "float privacy parameter is rounded up the same way.)",
                FloatBudgetWarning,
                stacklevel=_warning_stacklevel(),
            )
    return used


def float_hint(x: Fraction) -> str | None:
    """If ``x`` is how odp takes a float privacy parameter that means more than the decimal
    it prints as (0.10000000000000001 for the float 0.1), a sentence saying so and what to pass
    instead; else ``None``.  For messages about a refused request (the float warning is given
    once per process, maybe long before)."""
    if x <= 0 or x.denominator == 1 or not MIN_MAGNITUDE <= x <= MAX_MAGNITUDE:
        return None
    as_float = float(x)
    shown = repr(as_float)
    if Fraction(shown) == x or shortest_decimal_at_least(as_float) != x:
        return None
    return (f"{format_fraction(x)} is how odp takes the float {shown} (rounded up to a "
            f'decimal not below its binary value); pass the string "{shown}" to mean {shown}')


#: Privacy parameters, budgets and scales must be 0 or lie in [MIN_MAGNITUDE, MAX_MAGNITUDE]:
#: outside, a value can neither be shown as a number people read nor converted to a float by
#: the numerical code (``1e400`` overflows a float, ``1e-400`` is a 400-digit fraction).
MIN_MAGNITUDE = Fraction(1, 10**300)
MAX_MAGNITUDE = Fraction(10**300)


def _in_range(x: Fraction, value: Any, name: str, error: type[Exception]) -> Fraction:
    if x and not MIN_MAGNITUDE <= abs(x) <= MAX_MAGNITUDE:
        if isinstance(value, str) or len(repr(value)) <= 40:
            shown = repr(value)
        else:  # not a 300-digit Fraction: its magnitude
            e = _floor_log10(x)
            shown = f"{'-' if x < 0 else ''}about {float(abs(x) / Fraction(10) ** e):.3g}e{e}"
        raise error(f"{name}={shown} is outside the range odp accepts for it (0, or a "
                    "magnitude between 1e-300 and 1e300)")
    return x


def parse_epsilon(value: Any, *, name: str = "epsilon") -> Fraction:
    """A finite ε ≥ 0 (0 or between 1e-300 and 1e300).  A float is rounded up to
    :func:`shortest_decimal_at_least` it (module docstring)."""
    eps = _privacy_number(value, name)
    if eps < 0:
        raise InvalidBudget(f"{name} must be >= 0, got {format_fraction(eps)}")
    return _in_range(eps, value, name, InvalidBudget)


def parse_delta(value: Any, *, name: str = "delta") -> Fraction:
    """A δ with 0 ≤ δ < 1 (0 or at least 1e-300).  A float is rounded up to
    :func:`shortest_decimal_at_least` it (module docstring); the result is still < 1, since it
    reads back as the same float."""
    delta = _privacy_number(value, name)
    if delta < 0:
        raise InvalidBudget(f"{name} must be >= 0, got {format_fraction(delta)}")
    if delta >= 1:
        raise InvalidBudget(f"{name} must be < 1, got {format_fraction(delta)}")
    return _in_range(delta, value, name, InvalidBudget)


def parse_positive(value: Any, *, name: str = "value") -> Fraction:
    """A finite number > 0, parsed exactly (e.g. a sensitivity, a noise scale, a grid step),
    between 1e-300 and 1e300."""
    x = to_fraction(value, name=name)
    if x <= 0:
        raise InvalidParameter(f"{name} must be > 0, got {value!r}")
    return _in_range(x, value, name, InvalidParameter)


def parse_nonnegative(value: Any, *, name: str = "value") -> Fraction:
    """A finite number >= 0, parsed exactly (0 or between 1e-300 and 1e300)."""
    x = to_fraction(value, name=name)
    if x < 0:
        raise InvalidParameter(f"{name} must be >= 0, got {value!r}")
    return _in_range(x, value, name, InvalidParameter)


def parse_positive_int(value: Any, *, name: str = "value") -> int:
    """An integer >= 1 (``bool`` refused; numpy integers accepted)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise InvalidParameter(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def parse_alpha(alpha: Any, *, name: str = "alpha") -> Fraction:
    """A Rényi order α > 1, parsed exactly (``"3"``, ``"1.5"``, ``Fraction(3, 2)``, …)."""
    a = to_fraction(alpha, name=name)
    if a <= 1:
        raise InvalidParameter(f"{name} must be > 1 (a Rényi order), got {a}")
    return a


#: Longest fractional part :func:`format_fraction` writes as a decimal (beyond: ``p/q``).
FRACTION_DECIMAL_PLACES = 30


def format_fraction(x: Fraction) -> str:
    """Short exact text for ``x``: a decimal when finite with at most
    :data:`FRACTION_DECIMAL_PLACES` places ("0.001", "1e-06" style avoided), else ``p/q``.
    ``Fraction(format_fraction(x)) == x`` always holds."""
    if x.denominator == 1:
        return str(x.numerator)
    d = x.denominator
    twos = fives = 0
    while d % 2 == 0:
        d //= 2
        twos += 1
    while d % 5 == 0:
        d //= 5
        fives += 1
    if d == 1 and max(twos, fives) <= FRACTION_DECIMAL_PLACES:
        places = max(twos, fives)
        scaled = x * 10**places
        sign = "-" if scaled < 0 else ""
        digits = str(abs(scaled.numerator)).rjust(places + 1, "0")
        text = f"{sign}{digits[:-places]}.{digits[-places:]}".rstrip("0").rstrip(".")
        return text
    return f"{x.numerator}/{x.denominator}"


#: :func:`display_fraction` prints a terminating decimal exactly when it has at most this many
#: significant digits: every decimal people write, and odp's 12-digit rounded conversions and
#: bounds.  Longer ones -- a float rounded up by :func:`shortest_decimal_at_least`
#: (0.10000000000000001) and what such charges leave of a budget (0.49442425373199997) -- are
#: rounded to :data:`DISPLAY_ROUNDED_DIGITS` in the safe direction and marked (``≥0.494424``).
DISPLAY_EXACT_DIGITS = 12
#: ... and otherwise rounds it, in the safe direction and marked, to this many.
DISPLAY_ROUNDED_DIGITS = 6
#: A rounded display is followed by the exact ``(p/q)`` when that text is at most this long.
DISPLAY_RATIO_CHARS = 12
#: Decimals in [DISPLAY_POSITIONAL_MIN, DISPLAY_POSITIONAL_MAX) print positionally
#: (``0.000001``, ``12.5``), others in scientific notation (``1e-12``, ``2.5e+30``).
DISPLAY_POSITIONAL_MIN = Fraction(1, 10**6)
DISPLAY_POSITIONAL_MAX = Fraction(10**21)


def _digits_and_exponent(x: Fraction) -> tuple[int, int] | None:
    """``(n, e)`` with ``|x| = n·10^e`` and ``n`` not a multiple of 10, for a terminating decimal
    ``x ≠ 0``; ``None`` if ``x`` has no terminating decimal expansion."""
    d = x.denominator
    for p in (2, 5):
        while d % p == 0:
            d //= p
    if d != 1:
        return None
    y, e = abs(x), 0
    while y.denominator != 1:
        y *= 10
        e -= 1
    n = y.numerator
    while n % 10 == 0:
        n //= 10
        e += 1
    return n, e


def _short_decimal(x: Fraction, max_digits: int = DISPLAY_EXACT_DIGITS) -> str | None:
    """``x`` exactly as a decimal of at most ``max_digits`` significant digits (positional, or
    scientific outside [1e-6, 1e21)); ``None`` if there is none."""
    if x == 0:
        return "0"
    parts = _digits_and_exponent(x)
    if parts is None:
        return None
    n, e = parts
    digits = str(n)
    if len(digits) > max_digits:
        return None
    if DISPLAY_POSITIONAL_MIN <= abs(x) < DISPLAY_POSITIONAL_MAX:
        return format_fraction(x)
    sign = "-" if x < 0 else ""
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{sign}{mantissa}e{e + len(digits) - 1:+d}"


def display_fraction(x: Fraction | int, rounding: str = "up", *,
                     digits: int | None = None) -> str:
    """``x`` as people read it (``odp ledger show``, ``Budget.__repr__``; module docstring).

    * A terminating decimal of at most :data:`DISPLAY_EXACT_DIGITS` significant digits is shown
      **exactly**: ``0.1``, ``0.000001``, ``1e-12``, ``3``, ``0.429941468838``.
    * Anything else (``1/3``, a float rounded up such as ``0.10000000000000001``, or a
      55-digit remainder of old float charges) is rounded to
      :data:`DISPLAY_ROUNDED_DIGITS` significant digits in the **safe direction** and marked with
      the relation that holds: ``rounding="up"`` (costs, charges, δ of a round) gives
      ``≤0.333334`` — the value is at most that; ``rounding="down"`` (a budget, what remains, a
      refund) gives ``≥0.333333`` — at least that.  The exact ``(p/q)`` follows when it is at
      most :data:`DISPLAY_RATIO_CHARS` characters: ``≥0.333333 (1/3)``.

    ``digits`` (a narrow table): exact up to that many significant digits, else rounded to
    that many, marked, and without the ``(p/q)``.

    Never an unmarked rounded number; the exact value is :func:`format_fraction` /
    ``str(Fraction)`` (``--json``)."""
    if rounding not in ("up", "down"):
        raise InvalidParameter(f"rounding must be 'up' or 'down', got {rounding!r}")
    x = Fraction(x)
    exact = _short_decimal(x, DISPLAY_EXACT_DIGITS if digits is None else digits)
    if exact is not None:
        return exact
    up = rounding == "up"
    kept = DISPLAY_ROUNDED_DIGITS if digits is None else digits
    shown = _short_decimal(_round_significant(x, kept, up=up), kept)
    ratio = f"{x.numerator}/{x.denominator}"
    suffix = f" ({ratio})" if digits is None and len(ratio) <= DISPLAY_RATIO_CHARS else ""
    return f"{'≤' if up else '≥'}{shown}{suffix}"


def display_named(name: str, x: Fraction | int, rounding: str = "up") -> str:
    """``name=value`` for an exact display, ``name≤value`` / ``name≥value`` for a rounded one
    (:func:`display_fraction`): ``ε=0.1``, ``ε≥0.333333 (1/3)``."""
    text = display_fraction(x, rounding)
    return f"{name}{text}" if text[0] in "≤≥" else f"{name}={text}"


class Budget:
    """An exact (ε, δ) pair with ε ≥ 0 and 0 ≤ δ < 1.

    >>> Budget("1", "1e-6")
    Budget(epsilon=1, delta=0.000001)
    >>> Budget("0.3") - Budget("0.1") - Budget("0.1") - Budget("0.1")
    Budget(epsilon=0, delta=0)
    >>> Budget("2/3")
    Budget(epsilon≥0.666666 (2/3), delta=0)
    """

    __slots__ = ("_epsilon", "_delta")

    def __init__(self, epsilon: Number = 0, delta: Number = 0):
        self._epsilon = parse_epsilon(epsilon)
        self._delta = parse_delta(delta)

    @classmethod
    def _trusted(cls, epsilon: Fraction, delta: Fraction) -> "Budget":
        """Internal constructor for values already known to be valid Fractions."""
        obj = object.__new__(cls)
        obj._epsilon = epsilon
        obj._delta = delta
        return obj

    @property
    def epsilon(self) -> Fraction:
        return self._epsilon

    @property
    def delta(self) -> Fraction:
        return self._delta

    def fits_in(self, other: "Budget") -> bool:
        """``self.epsilon <= other.epsilon and self.delta <= other.delta``."""
        return self._epsilon <= other._epsilon and self._delta <= other._delta

    def __add__(self, other: "Budget") -> "Budget":
        if not isinstance(other, Budget):
            return NotImplemented
        total_delta = self._delta + other._delta
        if total_delta >= 1:
            raise InvalidBudget(f"delta of the sum would be >= 1: {format_fraction(total_delta)}")
        return Budget._trusted(self._epsilon + other._epsilon, total_delta)

    def __sub__(self, other: "Budget") -> "Budget":
        if not isinstance(other, Budget):
            return NotImplemented
        eps = self._epsilon - other._epsilon
        delta = self._delta - other._delta
        if eps < 0 or delta < 0:
            raise InvalidBudget(f"cannot subtract {other} from {self}: the result is negative")
        return Budget._trusted(eps, delta)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Budget):
            return NotImplemented
        return self._epsilon == other._epsilon and self._delta == other._delta

    def __hash__(self) -> int:
        return hash((self._epsilon, self._delta))

    def __iter__(self) -> Iterator[Fraction]:
        yield self._epsilon
        yield self._delta

    def __repr__(self) -> str:
        """Readable, never overstated: :func:`display_fraction` rounding down (a budget or
        what remains of one), e.g. ``Budget(epsilon=0.7, delta=0.000001)`` or
        ``Budget(epsilon≥0.666666 (2/3), delta=0)``.  The exact values: :meth:`to_json`."""
        return (f"Budget({display_named('epsilon', self._epsilon, 'down')}, "
                f"{display_named('delta', self._delta, 'down')})")

    def to_json(self) -> dict[str, str]:
        """Exact JSON form: ``{"epsilon": "p/q", "delta": "p/q"}``."""
        return {"epsilon": str(self._epsilon), "delta": str(self._delta)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Budget":
        return cls(data["epsilon"], data["delta"])
