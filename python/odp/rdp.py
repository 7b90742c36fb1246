"""Rényi DP of the Poisson-subsampled Gaussian mechanism, as rigorous upper bounds, and an RDP
accountant that converts the composed curve to (ε, δ)-DP over a grid of orders.

The mechanism (the *sampled Gaussian mechanism*, SGM, of DP-SGD): each record is kept
independently with probability ``q`` (Poisson sampling), a function of L2-sensitivity 1 is
evaluated on the sample and ``N(0, σ²)`` noise is added (``σ`` is the noise multiplier).
Neighbouring datasets differ by adding or removing one record (:attr:`odp.Neighbours.ADD_REMOVE`:
charge a curve to an accountant of that relation, or convert it, :mod:`odp.neighbours`).

Mironov, Talwar, Zhang, *Rényi Differential Privacy of the Sampled Gaussian Mechanism*
(arXiv:1908.10530, 2019) — "MTZ" below — reduce its Rényi DP at order α > 1 to one dimension:
with ``μ0 = N(0, σ²)``, ``μ1 = N(1, σ²)`` and ``μ = (1−q)μ0 + qμ1``,

    ε(α) = max(D_α(μ‖μ0), D_α(μ0‖μ)) = ln(A_α)/(α−1),  A_α = E_{z∼μ0}[(μ(z)/μ0(z))^α],

where MTZ (Sec. 3) show that the first direction dominates (``A_α ≥ B_α``);
``tests/test_rdp.py`` also checks both directions against mpmath quadrature.

``A_α`` is evaluated as in MTZ Sec. 3.3, with every number enclosed by outward-rounded decimal
intervals (:mod:`odp.intervals`, :mod:`odp.normal`) so that the value returned is an **upper
bound** on ε(α):

* **integer α** (Sec. 3.3.1): the exact finite binomial expansion
  ``A_α = Σ_{k=0}^{α} C(α,k) (1−q)^{α−k} q^k e^{(k²−k)/(2σ²)}``;
* **fractional α** (Sec. 3.3.2): split the integral at ``z0 = σ² ln(1/q − 1) + 1/2`` (where
  ``q·μ1/μ0 = 1−q``) and expand ``((1−q) + q·μ1/μ0)^α`` by the binomial series on each side:
  ``A_α = Σ_{k≥0} C(α,k) [ (1−q)^{α−k} q^k e^{(k²−k)/(2σ²)} Φ((z0−k)/σ)
  + (1−q)^k q^{α−k} e^{(j²−j)/(2σ²)} Q((z0−j)/σ) ]`` with ``j = α−k``.  MTZ truncate the series
  numerically; here the **remainder is bracketed**: for K > α the terms of each side
  alternate in sign and decrease in absolute value, so (Leibniz) ``Σ_{k≥K} term_k`` lies between
  0 and ``term_K``.  (Proof: on the side z ≤ z0 the k-th term is
  ``C(α,k)(1−q)^α ∫_{z≤z0} μ0 u^k`` with ``u = qμ1/((1−q)μ0) ∈ (0, 1]``, so the integral does
  not increase with k; for k > α, ``C(α,k+1)/C(α,k) = (α−k)/(k+1) ∈ (−1, 0)``, so the
  coefficients alternate and decrease in absolute value, and tend to 0.  The side z ≥ z0 is the
  same with ``u = (1−q)μ0/(qμ1) ∈ (0, 1]``; both sides' K-th terms have the sign of
  ``C(α,K)``.)  The upper bound is therefore the partial sum, plus ``term_K`` when that is
  positive.  Where ``k ≥ z0`` (resp.
  ``j ≤ z0``) the Gaussian factors are combined exactly: the term equals
  ``|C(α,k)|·(1−q)^α·e^{−z0²/(2σ²)}·SQ(x)``, ``SQ(x) = e^{x²/2}Q(x)``, ``x = |z0−k|/σ`` (resp.
  ``|z0−j|/σ``), because ``(2z0−1)/(2σ²) = ln((1−q)/q)``; no huge factor is ever formed.

Sums are taken in the log domain (shifted by the largest term) so that neither ``q^k`` nor
``e^{k²/(2σ²)}`` can overflow.  ``q = 1`` is the plain Gaussian, ``ε(α) = α/(2σ²)`` exactly.
Composition over T steps multiplies by T (Mironov 2017, Prop. 1).

The series is summed until its next term is below ``1e-11`` of the estimated ``ln A_α``
(or 20,000 terms); this only decides how *tight* the bound is — the remainder bound is always
added.  Results are cached per ``(q, σ, α)``.
"""

from __future__ import annotations

import functools
import math
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable, Iterable, Mapping, NamedTuple, TypeVar

from . import conversions as cv
from .budget import (MAX_MAGNITUDE, MIN_MAGNITUDE, parse_alpha, parse_delta, parse_epsilon,
                     to_fraction)
from .errors import InvalidParameter, budget_error_as
from .floats import round_up_significant
from .guarantees import RDP
from .neighbours import Neighbours
from .intervals import Arith, DecimalInterval
from .readable import ExactValue, Interval, UpperBound, readable, upper_bound
from .normal import cdf, scaled_tail_interval
from .rational import magnitude, short_number

_ORDERS = "Rényi orders > 1"
T = TypeVar("T", Fraction, int)  # an order: a Fraction, or an int for integer orders

__all__ = [
    "DEFAULT_ORDERS",
    "MAX_ORDER",
    "MAX_STEPS",
    "subsampled_gaussian_rdp",
    "subsampled_gaussian_rdp_bracket",
    "subsampled_gaussian_curve",
    "subsampled_gaussian_epsilon",
    "RDPAccountant",
]

#: dp-accounting's default orders (``RdpAccountant``), as exact rationals: 1.1, 1.2, …, 10.9,
#: 11, …, 63, 128, 256, 512, 1024.
DEFAULT_ORDERS: tuple[Fraction, ...] = (
    tuple(1 + Fraction(x, 10) for x in range(1, 100))
    + tuple(Fraction(n) for n in range(11, 64))
    + (Fraction(128), Fraction(256), Fraction(512), Fraction(1024)))

#: Largest order accepted (the integer expansion has α+1 terms).
MAX_ORDER = 4096

#: Largest number of composed steps accepted (a larger T is a unit mistake, not a run).
MAX_STEPS = 10**12

#: Significant decimal digits of the interval arithmetic.
DIGITS = 32

#: The series stops once its remainder bound is below this fraction of the estimated ln A_α.
_RELATIVE_TAIL = 1e-11

#: At most this many terms of the fractional-order series (then the remainder bound is added).
_MAX_TERMS = 20_000

#: Short rational for results: significant digits kept when rounding up.
_RESULT_DIGITS = 20


# ----------------------------------------------------------------------------- inputs

def _number(value: Any, name: str) -> Fraction:
    with budget_error_as(InvalidParameter):
        return to_fraction(value, name=name)


def check_rate(q: Any) -> Fraction:
    """A Poisson sampling rate ``0 < q <= 1``, exactly."""
    x = _number(q, "q (the sampling rate)")
    if not 0 < x <= 1:
        raise InvalidParameter(f"the sampling rate q must be in (0, 1], got {q!r}")
    return x


def check_sigma(sigma: Any) -> Fraction:
    """A noise multiplier ``σ > 0``, exactly."""
    x = _number(sigma, "sigma (the noise multiplier)")
    if x <= 0:
        raise InvalidParameter(f"the noise multiplier sigma must be > 0, got {sigma!r}")
    return x


def check_delta(delta: Any) -> Fraction:
    """A target ``0 < δ < 1`` of DP-SGD's (ε, δ) guarantee, exactly: the Gaussian noise has no
    pure (δ = 0) guarantee, so δ = 0 is refused."""
    with budget_error_as(InvalidParameter):
        d = parse_delta(delta, name="delta")
    if d == 0:
        raise InvalidParameter("delta must be > 0: the Gaussian noise of DP-SGD has no pure "
                               "(delta = 0) guarantee")
    return d


def check_order(alpha: Any) -> Fraction:
    """A Rényi order ``1 < α <= MAX_ORDER``, exactly."""
    a = parse_alpha(alpha)
    if a > MAX_ORDER:
        raise InvalidParameter(f"the Rényi order must be at most {MAX_ORDER}, got {alpha!r}")
    return a


def check_steps(steps: Any) -> int:
    """A number of steps ``1 <= T <= MAX_STEPS`` (an integer; bool refused)."""
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
        raise InvalidParameter(
            f"steps must be an integer from 1 to {MAX_STEPS:.0e}, got {steps!r}")
    return steps


# ----------------------------------------------------------------------------- log A_α

def _ln(x: Fraction) -> float:
    """``ln x`` for a positive Fraction of any size, as a float (estimates only)."""
    return math.log(x.numerator) - math.log(x.denominator)


def _digits(q: Fraction, sigma: Fraction) -> int:
    """More digits when A_α − 1 is tiny (σ/q large), so that ln A_α keeps relative precision."""
    extra = 2 * (_ln(sigma) - _ln(q)) / math.log(10) if q < 1 else 0.0
    return DIGITS + min(max(int(extra), 0), 200)


def _estimate_log_a(q: Fraction, sigma: Fraction, alpha: Fraction) -> float:
    """A float estimate of ``ln ln A_α`` from its leading term ``α(α−1)/2·q²·(e^{1/σ²} − 1)``;
    it decides only when the series stops."""
    log_x = -2 * _ln(sigma)  # x = 1/σ², ln(e^x − 1) without forming x or e^x out of range
    if log_x > 700:
        log_expm1 = math.exp(log_x) if log_x < 709 else math.inf
    elif log_x > 0:
        x = math.exp(log_x)
        log_expm1 = x + math.log1p(-math.exp(-x))
    elif log_x > -700:
        log_expm1 = math.log(math.expm1(math.exp(log_x)))
    else:
        log_expm1 = log_x  # e^x − 1 = x (1 + x/2 + …)
    return _ln(alpha * (alpha - 1) / 2) + 2 * _ln(q) + log_expm1


#: A term ``sign · value · e^rest``: ``value`` an interval of a linear factor, ``rest`` of the
#: logarithm of the other factor.
_Term = tuple[int, DecimalInterval, DecimalInterval]


def _sum_terms(ar: Arith, terms: list[_Term], tail: list[_Term]) -> DecimalInterval:
    """Enclosure of ``ln(Σ terms + R)`` where the remainder R lies between 0 and ``Σ tail``
    (all tail terms have one sign: Leibniz), clamped below at 0 (``A_α ≥ 1`` by Jensen).
    Evaluated as ``M + ln Σ sign·value·e^{rest − M}`` with M the largest ``rest`` end (an exact
    decimal, so the shift is exact), so that nothing overflows."""
    shift = max(rest.hi for _, _, rest in terms + tail)
    m = DecimalInterval(shift, shift)
    total = DecimalInterval(Decimal(0), Decimal(0))
    scales: dict[DecimalInterval, DecimalInterval] = {}  # e^{rest − M}, once per distinct rest

    def scaled(value: DecimalInterval, rest: DecimalInterval) -> DecimalInterval:
        if rest not in scales:
            scales[rest] = ar.exp(ar.sub(rest, m))
        return ar.mul(value, scales[rest])

    for sign, value, rest in terms:
        e = scaled(value, rest)
        total = ar.add(total, e) if sign > 0 else ar.sub(total, e)
    for sign, value, rest in tail:  # Leibniz: the remainder is between 0 and these terms
        r = scaled(value, rest).hi
        if sign > 0:
            total = DecimalInterval(total.lo, ar.up.add(total.hi, r))
        else:
            total = DecimalInterval(ar.dn.subtract(total.lo, r), total.hi)
    hi = ar.add(m, ar.ln(DecimalInterval(total.hi, total.hi))).hi
    lo = ar.add(m, ar.ln(DecimalInterval(total.lo, total.lo))).lo if total.lo > 0 else Decimal(0)
    return DecimalInterval(max(lo, Decimal(0)), hi)


class _Setup(NamedTuple):
    ar: Arith
    lq: DecimalInterval      # ln q
    l1q: DecimalInterval     # ln(1 − q)
    inv: Fraction     # 1/(2σ²)
    z0: DecimalInterval      # σ² ln((1−q)/q) + 1/2
    z0_term: DecimalInterval  # z0²/(2σ²)


@functools.lru_cache(maxsize=256)
def _setup(q: Fraction, sigma: Fraction, digits: int) -> _Setup:
    ar = Arith.at(digits)
    lq, l1q = ar.ln(ar.of(q)), ar.ln(ar.of(1 - q))
    inv = Fraction(1) / (2 * sigma * sigma)
    z0 = ar.add(ar.scale(ar.sub(l1q, lq), sigma * sigma), ar.of(Fraction(1, 2)))
    return _Setup(ar, lq, l1q, inv, z0, ar.scale(ar.sqr(z0), inv))


@functools.lru_cache(maxsize=200_000)
def _gauss(q: Fraction, sigma: Fraction, shift: Fraction, *, flip: bool,
           digits: int) -> tuple[bool, DecimalInterval]:
    """The Gaussian factor of a term, for ``y = (z0 − shift)/σ`` (``flip``: ``−y``):
    ``(True, SQ(−y))`` where ``y <= 0`` (the combined form of the module docstring), else
    ``(False, Φ(y))``.  Shared by all orders with the same ``(q, σ)``: cached."""
    st = _setup(q, sigma, digits)
    ar = st.ar
    y = ar.scale(ar.sub(st.z0, ar.of(shift)), 1 / sigma)
    if flip:
        y = Arith.neg(y)
    if y.hi <= 0:
        return True, scaled_tail_interval(Arith.neg(y), digits)
    return False, cdf(y, digits)


def _log_a_integer(q: Fraction, sigma: Fraction, alpha: int, digits: int) -> DecimalInterval:
    """MTZ Sec. 3.3.1: ln Σ_k C(α,k)(1−q)^{α−k} q^k e^{(k²−k)/(2σ²)}."""
    st = _setup(q, sigma, digits)
    ar = st.ar
    terms: list[_Term] = []
    binom = 1
    for k in range(alpha + 1):
        rest = ar.add(ar.add(ar.scale(st.lq, k), ar.scale(st.l1q, alpha - k)),
                      ar.of((k * k - k) * st.inv))
        terms.append((1, ar.of(binom), rest))
        binom = binom * (alpha - k) // (k + 1)
    return _sum_terms(ar, terms, [])


def _rough_log(value: DecimalInterval, rest: DecimalInterval) -> float:
    """A float estimate of ``ln(value·e^rest)`` (decides only when the series stops)."""
    v = value.hi
    if v <= 0:
        return -math.inf
    e = v.adjusted()
    return (e + math.log10(float(v.scaleb(-e)))) * math.log(10) + float(rest.hi)


def _log_a_fractional(q: Fraction, sigma: Fraction, alpha: Fraction, digits: int) -> DecimalInterval:
    """MTZ Sec. 3.3.2 with the Leibniz remainder of the module docstring."""
    st = _setup(q, sigma, digits)
    ar = st.ar
    common = ar.sub(ar.scale(st.l1q, alpha), st.z0_term)  # ln((1−q)^α e^{−z0²/(2σ²)})
    log_tol = math.log(_RELATIVE_TAIL) + _estimate_log_a(q, sigma, alpha)
    terms: list[_Term] = []
    tail: list[_Term] = []
    coef = DecimalInterval(Decimal(1), Decimal(1))  # |C(α, k)|
    sign = 1
    k = 0
    while True:
        # side z <= z0: C(α,k) (1−q)^{α−k} q^k e^{(k²−k)/(2σ²)} Φ((z0−k)/σ)
        combined, g = _gauss(q, sigma, Fraction(k), flip=False, digits=digits)
        if combined:
            t1 = (sign, ar.mul(coef, g), common)
        else:
            rest = ar.add(ar.add(ar.scale(st.lq, k), ar.scale(st.l1q, alpha - k)),
                          ar.of((k * k - k) * st.inv))
            t1 = (sign, ar.mul(coef, g), rest)
        # side z >= z0: C(α,k) (1−q)^k q^j e^{(j²−j)/(2σ²)} Q((z0−j)/σ), j = α − k
        j = alpha - k
        combined, g = _gauss(q, sigma, j, flip=True, digits=digits)
        if combined:
            t2 = (sign, ar.mul(coef, g), common)
        else:
            rest = ar.add(ar.add(ar.scale(st.lq, j), ar.scale(st.l1q, k)),
                          ar.of((j * j - j) * st.inv))
            t2 = (sign, ar.mul(coef, g), rest)
        if k > alpha:  # alternating, decreasing terms from here on (module docstring)
            if (max(_rough_log(t1[1], t1[2]), _rough_log(t2[1], t2[2])) + 1 <= log_tol
                    or k >= _MAX_TERMS):
                tail = [t1, t2]
                break
        terms += [t1, t2]
        ratio = (alpha - k) / (k + 1)
        if ratio < 0:
            sign = -sign
        coef = ar.scale(coef, abs(ratio))
        k += 1
    return _sum_terms(ar, terms, tail)


@functools.lru_cache(maxsize=4096)
def _log_a(q: Fraction, sigma: Fraction, alpha: Fraction) -> DecimalInterval:
    digits = _digits(q, sigma)
    if alpha.denominator == 1:
        return _log_a_integer(q, sigma, int(alpha), digits)
    return _log_a_fractional(q, sigma, alpha, digits)


# ----------------------------------------------------------------------------- public API

def subsampled_gaussian_rdp_bracket(q: Any, sigma: Any, alpha: Any) -> Interval:
    """``(lower, upper)`` with ``lower <= ε(α) <= upper`` for one step of the
    Poisson-subsampled Gaussian mechanism (module docstring): an :class:`odp.readable.Interval`
    of exact Fractions (it unpacks as ``lo, hi = ...``)."""
    qq, s, a = check_rate(q), check_sigma(sigma), check_order(alpha)
    if qq == 1:
        exact = a / (2 * s * s)
        return Interval(exact, exact)
    la = _log_a(qq, s, a)
    return Interval(Fraction(la.lo) / (a - 1), Fraction(la.hi) / (a - 1))


def subsampled_gaussian_rdp(q: Any, sigma: Any, alpha: Any, steps: Any = 1) -> UpperBound:
    """An upper bound on the order-α Rényi DP of ``steps`` compositions of the
    Poisson-subsampled Gaussian mechanism with sampling rate ``q`` and noise multiplier
    ``sigma`` (add/remove neighbours): ``T·ε(α)`` with ε(α) bounded as in the module docstring,
    rounded up to 20 significant digits (an :class:`odp.readable.UpperBound`: the exact
    Fraction, whose repr is a short decimal rounded up).  Exact (``T·α/(2σ²)``) for ``q = 1``.

    Like every ε in odp the result lies in odp's range (:func:`_in_range`): a bound above 1e300
    is refused with :class:`~odp.errors.InvalidParameter` (such a mechanism gives no privacy),
    one in ``(0, 1e-300)`` is rounded up to 1e-300."""
    t = check_steps(steps)
    bracket = subsampled_gaussian_rdp_bracket(q, sigma, alpha)
    lo, hi = Fraction(bracket.lower), Fraction(bracket.upper)  # both finite
    value = t * hi if lo == hi else round_up_significant(t * hi, _RESULT_DIGITS)
    return upper_bound(_in_range(value, f"the Rényi DP at order {short_number(alpha)} of {t} step(s) of the "
                            f"Poisson-subsampled Gaussian (q={short_number(q)}, sigma={short_number(sigma)})"))


def _in_range(value: Fraction, what: str) -> Fraction:
    """An upper bound on a Rényi DP value brought into odp's range of privacy numbers
    (:data:`odp.budget.MAX_MAGNITUDE`): ``(0, 1e-300)`` is rounded *up* to 1e-300 (still an
    upper bound); above 1e300 raises :class:`~odp.errors.InvalidParameter`."""
    if value > MAX_MAGNITUDE:
        raise InvalidParameter(
            f"{what} is {magnitude(value)}, above the largest privacy parameter odp represents "
            "(1e300): such a mechanism gives essentially no privacy")
    if 0 < value < MIN_MAGNITUDE:
        return MIN_MAGNITUDE
    return value


def subsampled_gaussian_curve(q: Any, sigma: Any, steps: Any = 1, *,
                              orders: Iterable[Any] = DEFAULT_ORDERS) -> list[RDP]:
    """:func:`subsampled_gaussian_rdp` at every order: ``[RDP(α, T·ε(α)), …]``, each value
    stating add/remove neighbours (``RDP.neighbours``; module docstring)."""
    qq, s, t = check_rate(q), check_sigma(sigma), check_steps(steps)
    return [RDP(a, subsampled_gaussian_rdp(qq, s, a, t), neighbours=Neighbours.ADD_REMOVE)
            for a in parse_orders(orders, check_order, _ORDERS)]


def subsampled_gaussian_epsilon(q: Any, sigma: Any, steps: Any, delta: Any, *,
                                orders: Iterable[Any] = DEFAULT_ORDERS
                                ) -> tuple[UpperBound, ExactValue]:
    """``(ε, α)``: an upper bound on the ε of ``steps`` compositions of the Poisson-subsampled
    Gaussian mechanism at ``delta`` (the best over ``orders`` of the conversion
    :func:`odp.conversions.rdp_to_dp_epsilon`), and the order that gives it."""
    return _best(subsampled_gaussian_curve(q, sigma, steps, orders=orders), delta)


def _best(curve: list[RDP], delta: Any) -> tuple[UpperBound, ExactValue]:
    eps, alpha = cv.best_rdp_to_dp(curve, delta)
    return upper_bound(eps), readable(alpha)


def parse_orders(orders: Iterable[Any], check: Callable[[Any], T], what: str) -> tuple[T, ...]:
    """A non-empty, sorted tuple of distinct orders, each checked by ``check``; ``what`` names
    them in the error."""
    if isinstance(orders, (str, bytes)) or not isinstance(orders, Iterable):
        raise InvalidParameter(f"orders must be a sequence of {what}")
    out = tuple(sorted({check(a) for a in orders}))
    if not out:
        raise InvalidParameter("orders must not be empty")
    return out



class RDPAccountant:
    """Composition of mechanisms with known RDP curves, at a fixed grid of orders, converted to
    (ε, δ)-DP with the best order.

    The parameters of every step (q, σ, number of steps) are fixed by the caller; RDP
    composition adds the curves at every order (Mironov 2017, Prop. 1), including when each
    step's query is chosen adaptively.  Choosing the order after the fact is valid because the
    whole curve holds simultaneously.  (For budgets whose *parameters* are chosen adaptively,
    use a filter: :class:`odp.filters.RDPFilter` fixes α up front.)

    All totals are exact Fractions (upper bounds rounded up); :meth:`get_epsilon` is an upper
    bound on ε at the given δ::

        acc = RDPAccountant()
        acc.compose_subsampled_gaussian(q="0.01", sigma="1.1", steps=10_000)
        acc.get_epsilon("1e-5")            # <= 5.63 (dp-accounting's RdpAccountant: 5.632)
    """

    def __init__(self, orders: Iterable[Any] = DEFAULT_ORDERS):
        self._orders = parse_orders(orders, check_order, _ORDERS)
        self._totals: dict[Fraction, Fraction] = {a: Fraction(0) for a in self._orders}
        self._events: list[dict[str, str]] = []
        #: add/remove once a Poisson-subsampled Gaussian is composed (:meth:`rdp`)
        self._relation: Neighbours | None = None

    @property
    def orders(self) -> tuple[Fraction, ...]:
        return self._orders

    @property
    def events(self) -> list[dict[str, str]]:
        """What was composed, in order (exact text)."""
        return [dict(e) for e in self._events]

    def _add(self, values: Mapping[Fraction, Fraction], event: dict[str, str]) -> "RDPAccountant":
        what = ", ".join(f"{k}={short_number(v)}" for k, v in event.items())
        totals = {a: _in_range(self._totals[a] + values[a],
                              f"the composed Rényi DP at order {a} after adding {what}")
                  for a in self._orders}  # checked before anything changes
        self._totals.update(totals)
        self._events.append(event)
        return self

    def compose_subsampled_gaussian(self, q: Any, sigma: Any, steps: Any = 1) -> "RDPAccountant":
        """Add ``steps`` Poisson-subsampled Gaussian steps (:func:`subsampled_gaussian_rdp`)."""
        qq, s, t = check_rate(q), check_sigma(sigma), check_steps(steps)
        values = {a: subsampled_gaussian_rdp(qq, s, a, t) for a in self._orders}
        self._add(values, {"event": "poisson_subsampled_gaussian", "q": str(qq),
                           "sigma": str(s), "steps": str(t)})
        self._relation = Neighbours.ADD_REMOVE  # MTZ's analysis: add/remove neighbours
        return self

    def compose_gaussian(self, sigma: Any, steps: Any = 1, sensitivity: Any = 1) -> "RDPAccountant":
        """Add ``steps`` Gaussian mechanisms: ``α·Δ²/(2σ²)`` each (exact)."""
        t, s = check_steps(steps), check_sigma(sigma)
        d = _number(sensitivity, "sensitivity")
        if d <= 0:
            raise InvalidParameter(f"sensitivity must be > 0, got {sensitivity!r}")
        values = {a: t * a * d * d / (2 * s * s) for a in self._orders}  # Mironov 2017 Table II
        return self._add(values, {"event": "gaussian", "sigma": str(s), "sensitivity": str(d),
                                  "steps": str(t)})

    def compose_rdp(self, curve: Any, steps: Any = 1, *, name: str = "rdp_curve") -> "RDPAccountant":
        """Add ``steps`` mechanisms with RDP curve ``curve``: a function ``alpha -> ε(α)``
        (called with exact Fractions), or a mapping ``{alpha: ε}`` covering every order."""
        t = check_steps(steps)
        values: dict[Fraction, Fraction] = {}
        for a in self._orders:
            if isinstance(curve, Mapping):
                found = [v for k, v in curve.items() if parse_alpha(k) == a]
                if not found:
                    raise InvalidParameter(f"the RDP curve has no value at order {a}")
                raw = found[0]
            elif callable(curve):
                raw = curve(a)
            else:
                raise InvalidParameter("curve must be a function alpha -> epsilon or a mapping")
            with budget_error_as(InvalidParameter):
                values[a] = t * parse_epsilon(raw, name=f"the curve's value at α={a}")
        return self._add(values, {"event": name, "steps": str(t)})

    def rdp(self) -> list[RDP]:
        """The composed curve ``[RDP(α, Σ ε_i(α)), …]`` (exact totals of upper bounds).  Once a
        Poisson-subsampled Gaussian is composed (:meth:`compose_subsampled_gaussian`, an
        add/remove analysis) each value states add/remove neighbours (``RDP.neighbours``);
        the other events' relation is your claim (then add/remove too), and a curve of them
        alone states none."""
        return [RDP(a, self._totals[a], neighbours=self._relation) for a in self._orders]

    def get_epsilon_and_order(self, delta: Any) -> tuple[UpperBound, ExactValue]:
        """``(ε, α)``: the smallest conversion :func:`odp.conversions.rdp_to_dp_epsilon` over
        the orders, and its order."""
        return _best(self.rdp(), delta)

    def get_epsilon(self, delta: Any) -> UpperBound:
        """An upper bound on ε at ``delta`` for everything composed so far."""
        return self.get_epsilon_and_order(delta)[0]

    def __repr__(self) -> str:
        return f"RDPAccountant(orders={len(self._orders)}, events={len(self._events)})"
