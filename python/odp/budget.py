"""Exact privacy budgets on :class:`fractions.Fraction`.

Every ε, δ, cost and remaining budget in odp is a ``Fraction``.  Inputs are parsed exactly:

* ``str``: ``"0.1"``, ``"1e-6"``, ``"1/3"`` (the decimal or ratio you wrote, exactly);
* ``int``, ``Fraction`` and other :class:`numbers.Rational` values (e.g. ``numpy.int64``);
* ``decimal.Decimal``: its exact value;
* ``float``: its *exact binary value* (``0.1`` is 3602879701896397/36028797018963968).  A
  :class:`~odp.errors.FloatBudgetWarning` is issued when that differs from the decimal the float
  prints as, because ten float ``0.1`` spends then exceed a budget of ``1``.

NaN, ±inf, negative values, δ ≥ 1, booleans and non-numbers raise
:class:`~odp.errors.InvalidBudget`.  Irrational costs are rounded *up*: see :mod:`odp.rational`.
"""

from __future__ import annotations

import decimal
import math
import numbers
import warnings
from fractions import Fraction
from typing import Any, Iterator, Union

from .errors import FloatBudgetWarning, InvalidBudget, InvalidParameter

Number = Union[str, int, float, Fraction, decimal.Decimal, numbers.Real]

__all__ = ["Budget", "to_fraction", "parse_epsilon", "parse_delta", "parse_positive",
           "parse_nonnegative", "parse_positive_int", "parse_alpha", "format_fraction"]


def to_fraction(value: Any, *, name: str = "value", warn: bool = True) -> Fraction:
    """Parse ``value`` exactly into a finite ``Fraction`` (sign not checked).

    Raises :class:`InvalidBudget` for NaN, infinities, booleans and non-numeric input.  Floats
    of every width (``float``, ``numpy.float32``, ``numpy.longdouble``, …) give their exact
    binary value; ``warn=False`` suppresses the :class:`FloatBudgetWarning` (for data values).
    """
    if isinstance(value, bool) or value is None:
        raise InvalidBudget(f"{name} must be a number, got {value!r}")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, str):
        text = value.strip()
        if not text.isascii():  # Fraction() would read '١' (Arabic-Indic one) as 1
            raise InvalidBudget(f"{name} must be written with ASCII digits such as '0.1', "
                                f"'1e-6' or '1/3', got {value!r}")
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


#: Privacy parameters, budgets and scales must be 0 or lie in [MIN_MAGNITUDE, MAX_MAGNITUDE]:
#: outside, a value can neither be shown as a number people read nor converted to a float by
#: the numerical code (``1e400`` overflows a float, ``1e-400`` is a 400-digit fraction).
MIN_MAGNITUDE = Fraction(1, 10**300)
MAX_MAGNITUDE = Fraction(10**300)


def _in_range(x: Fraction, value: Any, name: str, error: type[Exception]) -> Fraction:
    if x and not MIN_MAGNITUDE <= abs(x) <= MAX_MAGNITUDE:
        raise error(f"{name}={value!r} is outside the range odp accepts for it (0, or a "
                    "magnitude between 1e-300 and 1e300)")
    return x


def parse_epsilon(value: Any, *, name: str = "epsilon") -> Fraction:
    """A finite ε ≥ 0 (0 or between 1e-300 and 1e300)."""
    eps = to_fraction(value, name=name)
    if eps < 0:
        raise InvalidBudget(f"{name} must be >= 0, got {format_fraction(eps)}")
    return _in_range(eps, value, name, InvalidBudget)


def parse_delta(value: Any, *, name: str = "delta") -> Fraction:
    """A δ with 0 ≤ δ < 1 (0 or at least 1e-300)."""
    delta = to_fraction(value, name=name)
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


class Budget:
    """An exact (ε, δ) pair with ε ≥ 0 and 0 ≤ δ < 1.

    >>> Budget("1", "1e-6")
    Budget(epsilon=1, delta=0.000001)
    >>> Budget("0.3") - Budget("0.1") - Budget("0.1") - Budget("0.1")
    Budget(epsilon=0, delta=0)
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
        return (
            f"Budget(epsilon={format_fraction(self._epsilon)}, "
            f"delta={format_fraction(self._delta)})"
        )

    def to_json(self) -> dict[str, str]:
        """Exact JSON form: ``{"epsilon": "p/q", "delta": "p/q"}``."""
        return {"epsilon": str(self._epsilon), "delta": str(self._delta)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Budget":
        return cls(data["epsilon"], data["delta"])
