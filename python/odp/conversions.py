"""Conversions between privacy measures (pure DP, zCDP, Rényi DP, Gaussian DP → (ε, δ)-DP, and
the mechanisms' own curves), as exact or rigorously rounded rationals.

Every function returns a :class:`fractions.Fraction`.  Where the closed form is rational the
result is exact; where it involves ``ln``, ``exp`` or ``sqrt`` it is an **upper bound** (a cost
or a privacy parameter may only be rounded up), computed from the rigorous decimal brackets of
:mod:`odp.rational` and rounded up to the grid ``1/10**12``.

=============================  ==============================================================
function                       statement (source)
=============================  ==============================================================
:func:`pure_dp_to_zcdp`        ε-DP ⇒ (ε²/2)-zCDP — Bun & Steinke 2016, Prop. 1.4 (exact)
:func:`pure_dp_to_rdp`         ε-DP ⇒ (α, min(ε, αε²/2))-RDP — D_α ≤ D_∞ = ε and Prop. 1.4
:func:`zcdp_to_rdp`            ρ-zCDP ⇔ (α, αρ)-RDP for every α > 1 — Bun & Steinke Def. 1.1
:func:`zcdp_to_dp_epsilon`     ρ-zCDP ⇒ (ε, δ)-DP: the smaller of ρ + 2√(ρ ln(1/δ)) (Bun &
                               Steinke Prop. 1.3) and the RDP conversion below of (α, αρ)
:func:`rdp_to_dp_epsilon`      (α, ε_α)-RDP ⇒ (ε_α + ln((α−1)/α) − (ln δ + ln α)/(α−1), δ)-DP —
                               Canonne, Kamath, Steinke 2020, Prop. 12; Balle et al. 2020,
                               Thm. 21
:func:`best_rdp_to_dp`         the best of those over an RDP curve given at several orders
:func:`rdp_to_dp_offset`       the (upper bound on the) term that conversion adds to ε_α
:func:`rdp_to_dp_epsilon_mironov` (ε_α + ln(1/δ)/(α−1), δ) — Mironov 2017 Prop. 3 (looser)
:func:`gdp_delta`              μ-GDP: δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) — Dong, Roth,
                               Su 2022, Cor. 2.13 (exact; upper bound on δ)
:func:`gdp_to_dp_epsilon`      the smallest ε (grid 1e-12) with that δ(ε) ≤ δ
:func:`to_dp`                  any of zCDP / RDP / RDP curve / GDP → (ε, δ), with what a ledger
                               records about the original notion (used by Accountant.charge)
:func:`gaussian_zcdp`          N(0, σ²), L2-sensitivity Δ: ρ = Δ²/(2σ²) — Bun & Steinke Prop. 1.6
:func:`gaussian_rdp`           same: ε(α) = αΔ²/(2σ²) — Mironov 2017, Table II
:func:`discrete_gaussian_zcdp` N_ℤ(0, σ²), integer Δ: ρ = Δ²/(2σ²) — Canonne, Kamath, Steinke
                               2020, Thm. 4 (used for :class:`odp.GaussianMechanism`)
:func:`laplace_rdp`            Laplace(b), sensitivity Δ, λ = b/Δ: ε(α) = 1/(α−1) ·
                               ln(α/(2α−1)·e^{(α−1)/λ} + (α−1)/(2α−1)·e^{−α/λ}) — Mironov 2017,
                               Table II (continuous Laplace; upper bound)
:func:`mechanism_zcdp`         ρ of an odp mechanism (Laplace/RR: ε²/2; Gaussian: CKS Thm. 4)
=============================  ==============================================================

This module depends on no mechanism at import time (the accountant and :mod:`odp.rdp` import
it; :func:`mechanism_zcdp` imports :mod:`odp.mechanisms` when called).  The tests check each
statement against an independent high-precision computation of the divergence it bounds
(``tests/test_conversions.py``), never against the formula itself.
"""

from __future__ import annotations

import functools
import math
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable, Mapping, NamedTuple

from .budget import parse_alpha, parse_delta, parse_epsilon, parse_positive
from .errors import InvalidParameter
from .floats import round_up_significant
from .guarantees import DP, GDP, RDP, ZCDP
from .intervals import Arith, DecimalInterval
from .normal import scaled_tail
from .protocols import Convertible, RDPCurve
from .rational import bisect_on_grid, ceil_fraction, exp_bracket, log_bracket, sqrt_bracket
from .types import Number

__all__ = [
    "pure_dp_to_zcdp",
    "pure_dp_to_rdp",
    "zcdp_to_rdp",
    "zcdp_to_dp_epsilon",
    "rdp_to_dp_epsilon",
    "rdp_to_dp_epsilon_mironov",
    "best_rdp_to_dp",
    "rdp_to_dp_offset",
    "gdp_delta",
    "gdp_to_dp_epsilon",
    "to_dp",
    "Conversion",
    "gaussian_zcdp",
    "gaussian_rdp",
    "discrete_gaussian_zcdp",
    "laplace_rdp",
    "mechanism_zcdp",
    "ROUNDING_DENOMINATOR",
]

#: Irrational results are rounded up to multiples of 1/ROUNDING_DENOMINATOR.
ROUNDING_DENOMINATOR = 10**12


def _positive_delta(delta: Number) -> Fraction:
    d = parse_delta(delta)
    if d == 0:
        raise InvalidParameter("delta must be > 0 for this conversion (ln(1/δ) is infinite)")
    return d


def _zcdp_rho(rho: Number | ZCDP) -> Fraction:
    """ρ of a number or of a :class:`~odp.guarantees.ZCDP` value (δ = 0 only)."""
    if isinstance(rho, ZCDP):
        if rho.approximate:
            raise InvalidParameter(
                f"approximate zCDP ({rho}) has no (ε, δ) conversion here: its δ enters differently "
                "under the definitions in use (Bun & Steinke Def. 8.1 conditions on events); "
                "convert the ρ part and account for its δ separately")
        return rho.rho
    if isinstance(rho, (RDP, DP)):
        raise InvalidParameter(f"expected ρ (a number or odp.ZCDP), got {rho!r}")
    return parse_epsilon(rho, name="rho")


def zcdp_to_dp_epsilon(rho: Number | ZCDP, delta: Number) -> Fraction:
    """Upper bound on ε with ρ-zCDP ⇒ (ε, δ)-DP, rounded up: the smaller of

    * ``ρ + 2·√(ρ·ln(1/δ))`` (Bun & Steinke 2016, Prop. 1.3), and
    * the RDP conversion :func:`rdp_to_dp_epsilon` of ``(α, αρ)`` (ρ-zCDP is (α, αρ)-RDP for
      every α, Def. 1.1) at one order α chosen numerically near the minimiser (the choice only
      affects tightness; the value at the chosen rational α is evaluated rigorously).

    ``rho`` may be a number or a :class:`~odp.guarantees.ZCDP` with δ = 0 (e.g. a
    :class:`~odp.filters.ZCDPOdometer`'s ``privacy_loss()``)."""
    r = _zcdp_rho(rho)
    d = _positive_delta(delta)
    if r == 0:
        return Fraction(0)
    log_hi = log_bracket(1 / d)[1]
    root_hi = sqrt_bracket(r * log_hi)[1]
    bun_steinke = ceil_fraction(r + 2 * root_hi, ROUNDING_DENOMINATOR)
    try:
        rho_f = float(r)
    except OverflowError:
        return bun_steinke
    alpha = _best_order(lambda a: a * rho_f, d)
    return min(bun_steinke, rdp_to_dp_epsilon(alpha, alpha * r, d))


def _best_order(curve: Callable[[float], float], delta: Fraction) -> Fraction:
    """A rational order α > 1 near the minimiser of the float value of the RDP → DP conversion
    of ``curve`` (golden-section search over ln(α − 1)); a selector only, never a bound."""
    log_inv_delta = math.log(delta.denominator) - math.log(delta.numerator)

    def f(t: float) -> float:
        a = 1 + math.exp(t)
        return curve(a) + math.log1p(-1 / a) + (log_inv_delta - math.log(a)) / (a - 1)

    lo, hi = -12.0, 40.0
    g = (math.sqrt(5) - 1) / 2
    x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
    f1, f2 = f(x1), f(x2)
    for _ in range(120):
        if f1 <= f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - g * (hi - lo)
            f1 = f(x1)
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + g * (hi - lo)
            f2 = f(x2)
    a = 1 + math.exp((lo + hi) / 2)
    return 1 + round_up_significant(Fraction(a - 1), 6)


def rdp_to_dp_epsilon(alpha: Any, epsilon_alpha: Any = None, delta: Any = None) -> Fraction:
    """Upper bound on ε with (α, ε_α)-RDP ⇒ (ε, δ)-DP, rounded up:

        ε = ε_α + ln((α−1)/α) − (ln δ + ln α)/(α−1)      (clamped at 0)

    — Canonne, Kamath, Steinke 2020 (arXiv:2004.00010, Prop. 12 in v4); Balle, Barthe, Gaboardi,
    Hsu, Sato 2020 (AISTATS, Thm. 21); Asoodeh et al. 2020 (Eq. 20).  Always smaller than
    Mironov 2017 Prop. 3 (:func:`rdp_to_dp_epsilon_mironov`) by ``ln(α/(α−1)) + ln(α)/(α−1)``.

    Proof sketch (why it is sound): with L = dP/dQ, δ(ε) = E_Q[(L − e^ε)_+] and
    ``(x − e^ε)_+ ≤ c·x^α`` for ``c = (α−1)^{α−1}/α^α · e^{−(α−1)ε}`` (the maximum of the ratio,
    at x = αe^ε/(α−1)); so δ(ε) ≤ c·E_Q[L^α] = c·e^{(α−1)ε_α}, which solved for ε is the formula.
    δ(ε) decreases in ε, so a negative value means (0, δ)-DP.

    Called as ``rdp_to_dp_epsilon(alpha, epsilon_alpha, delta)`` or
    ``rdp_to_dp_epsilon(RDP(alpha, epsilon_alpha), delta)`` (e.g. an
    :class:`~odp.filters.RDPOdometer`'s ``privacy_loss()``)."""
    if isinstance(alpha, RDP):  # rdp_to_dp_epsilon(RDP(α, ε_α), δ) or (…, delta=δ)
        if epsilon_alpha is not None and delta is not None:
            raise InvalidParameter("rdp_to_dp_epsilon(RDP(α, ε_α), δ) takes δ as its only other "
                                   "argument")
        delta = delta if delta is not None else epsilon_alpha
        a, e = alpha.alpha, alpha.epsilon
    elif isinstance(alpha, (ZCDP, DP, GDP, list, tuple)):
        raise InvalidParameter(
            f"rdp_to_dp_epsilon takes an order α and ε_α, or one odp.RDP; got {alpha!r} "
            "(for a zCDP value use zcdp_to_dp_epsilon, for several orders best_rdp_to_dp)")
    else:
        a = parse_alpha(alpha)
        if epsilon_alpha is None:
            raise InvalidParameter("rdp_to_dp_epsilon(alpha, epsilon_alpha, delta): epsilon_alpha "
                                   "is missing")
        e = parse_epsilon(epsilon_alpha, name="epsilon_alpha")
    if delta is None:
        raise InvalidParameter("rdp_to_dp_epsilon needs delta")
    d = _positive_delta(delta)
    return max(Fraction(0), ceil_fraction(e + _cks_offset(a, d), ROUNDING_DENOMINATOR))


def rdp_to_dp_offset(alpha: Any, delta: Any) -> Fraction:
    """The upper bound on ``ln((α−1)/α) − (ln δ + ln α)/(α−1)`` that :func:`rdp_to_dp_epsilon`
    adds to ε_α (before rounding up): ``rdp_to_dp_epsilon(α, e, δ) = max(0, ⌈e + offset⌉)``
    on the 1e-12 grid.  Used to size an RDP budget for a target (ε, δ)."""
    return _cks_offset(parse_alpha(alpha), _positive_delta(delta))


@functools.lru_cache(maxsize=8192)
def _cks_offset(a: Fraction, d: Fraction) -> Fraction:
    """Upper bound on ``ln((α−1)/α) + (ln(1/δ) − ln α)/(α−1)``."""
    log_ratio_hi = log_bracket((a - 1) / a)[1]
    return log_ratio_hi + (log_bracket(1 / d)[1] - log_bracket(a)[0]) / (a - 1)


def rdp_to_dp_epsilon_mironov(alpha: Any, epsilon_alpha: Any, delta: Any) -> Fraction:
    """Upper bound on ε with (α, ε_α)-RDP ⇒ (ε, δ)-DP by Mironov 2017, Prop. 3:
    ``ε = ε_α + ln(1/δ)/(α−1)``, rounded up.  Looser than :func:`rdp_to_dp_epsilon`; kept to
    compare with papers and tools that use it."""
    a = parse_alpha(alpha)
    e = parse_epsilon(epsilon_alpha, name="epsilon_alpha")
    d = _positive_delta(delta)
    return ceil_fraction(e + log_bracket(1 / d)[1] / (a - 1), ROUNDING_DENOMINATOR)


def best_rdp_to_dp(curve: RDPCurve, delta: Number) -> tuple[Fraction, Fraction]:
    """``(ε, α)``: the smallest :func:`rdp_to_dp_epsilon` over an RDP curve given at several
    orders — a list of :class:`~odp.guarantees.RDP` (one mechanism, or one composition, that
    satisfies all of them) or a mapping ``{α: ε_α}`` — and the order that attains it (the
    smallest such order on ties).  Each value is an upper bound, so the minimum is one."""
    if isinstance(curve, RDP):
        curve = [curve]
    if isinstance(curve, Mapping):
        pairs = [(parse_alpha(a), parse_epsilon(e, name=f"epsilon at order {a}"))
                 for a, e in curve.items()]
    elif isinstance(curve, (list, tuple)) and all(isinstance(c, RDP) for c in curve):
        pairs = [(c.alpha, c.epsilon) for c in curve]
    else:
        raise InvalidParameter(
            f"expected a list of odp.RDP values or a mapping {{alpha: epsilon}}, got {curve!r}")
    if not pairs:
        raise InvalidParameter("the RDP curve is empty")
    d = _positive_delta(delta)
    best = min((rdp_to_dp_epsilon(a, e, d), a) for a, e in pairs)
    return best[0], best[1]


def gdp_delta(mu: Number | GDP, epsilon: Number) -> Fraction:
    """Upper bound on δ(ε) of a μ-GDP mechanism (Dong, Roth, Su 2022, Cor. 2.13, exact):
    ``δ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2)``.

    Slack: the value returned is ``>= δ(ε)`` and at most ``δ(ε)·(1 + 2·10^−29)`` (a rigorous
    enclosure of relative width ``<= 10^−32``, :func:`_gdp_delta_enclosure`, rounded up to 30
    significant digits) — except that a δ(ε) below ``10^−1000`` is returned as ``10^−1000``
    (an upper bound; smaller values would be rationals of astronomically many digits)."""
    m = _gdp_mu(mu)
    eps = parse_epsilon(epsilon)
    if m == 0:
        return Fraction(0)
    a = eps / m - m / 2
    if a > 0 and a * a / 2 >= _GDP_FLOOR_LOG:  # δ(ε) <= Q(a) <= e^{−a²/2}/2 < floor
        return _GDP_FLOOR
    v = _gdp_delta_enclosure(m, eps, lambda v: v.hi < _GDP_FLOOR_DECIMAL)
    if v.hi < _GDP_FLOOR_DECIMAL:
        return _GDP_FLOOR
    return round_up_significant(max(Fraction(v.hi), Fraction(0)), 30)


#: Starting precision (significant decimal digits) of the δ(ε) enclosure, and its ceiling.
_GDP_DIGITS = 40
_GDP_MAX_DIGITS = 1400

#: Relative width at which an enclosure of δ(ε) is accepted.
_GDP_RELATIVE_WIDTH = Decimal("1e-32")

#: gdp_delta returns at least this (δ(ε) below it is reported as it).
_GDP_FLOOR = Fraction(1, 10**1000)
_GDP_FLOOR_DECIMAL = Decimal("1e-1000")
#: ``1000·ln 10 < 2303``: ``a²/2 >= 2303`` implies ``e^{−a²/2}/2 < 10^−1000``.
_GDP_FLOOR_LOG = 2303


def _gdp_mu(mu: Number | GDP) -> Fraction:
    if isinstance(mu, GDP):
        return mu.mu
    if isinstance(mu, (RDP, ZCDP, DP)):
        raise InvalidParameter(f"expected μ (a number or odp.GDP), got {mu!r}")
    return parse_epsilon(mu, name="mu")


def _log10_abs(x: Fraction) -> float:
    """``log10 |x|`` as a float for a non-zero Fraction of any size (an estimate)."""
    return math.log10(abs(x.numerator)) - math.log10(x.denominator)


def _gdp_delta_bracket(m: Fraction, eps: Fraction, digits: int) -> DecimalInterval:
    """A rigorous enclosure of ``δ(ε) = Φ(−a) − e^ε·Φ(−b)``, ``a = ε/μ − μ/2``,
    ``b = ε/μ + μ/2``, at ``digits`` significant digits, in a form that keeps *relative*
    accuracy however small δ is.

    With ``SQ(x) = e^{x²/2}·Q(x)`` (:mod:`odp.normal`) and ``b² − a² = 2ε``, the second term is
    ``e^ε·Q(b) = e^{−a²/2}·SQ(b)`` exactly (``b > 0``), so no ``e^ε`` is ever formed; for
    ``a >= 0`` the first is ``Q(a) = e^{−a²/2}·SQ(a)`` and

        δ(ε) = e^{−a²/2} · (SQ(a) − SQ(b)),

    whose only cancellation is in ``SQ(a) − SQ(b)`` (``a`` near ``b``: small μ); for ``a < 0``
    the first term is ``1 − e^{−a²/2}·SQ(−a) >= 1/2``.  SQ decreases, so its enclosure over an
    interval of arguments is ``[SQ(x.hi).lo, SQ(x.lo).hi]`` (two point evaluations: a relative
    error, unlike a width-based bound); ``a²/2`` enters exactly (one rounding to ``digits``)."""
    ar = Arith.at(digits)
    a = eps / m - m / 2
    b = ar.of(eps / m + m / 2)
    x = ar.of(abs(a))
    g = ar.exp(Arith.neg(ar.of(a * a / 2)))  # e^{−a²/2}
    sq_b = DecimalInterval(scaled_tail(b.hi, digits).lo, scaled_tail(b.lo, digits).hi)
    sq_a = DecimalInterval(scaled_tail(x.hi, digits).lo, scaled_tail(x.lo, digits).hi)
    if a >= 0:
        return ar.mul(g, ar.sub(sq_a, sq_b))
    one = DecimalInterval(Decimal(1), Decimal(1))
    return ar.sub(ar.sub(one, ar.mul(g, sq_a)), ar.mul(g, sq_b))


def _gdp_delta_enclosure(m: Fraction, eps: Fraction,
                         decided: Callable[[DecimalInterval], bool]) -> DecimalInterval:
    """:func:`_gdp_delta_bracket` at a precision raised (doubled, up to
    :data:`_GDP_MAX_DIGITS`) until ``decided(enclosure)`` or the enclosure's relative width is
    at most :data:`_GDP_RELATIVE_WIDTH`.  The starting precision covers the exponent: ``e^{−X}``
    to relative ``10^−40`` needs ``X`` to absolute ``10^−40``, i.e. ``40 + log10 X`` digits.
    The enclosure is rigorous at every precision; the precision decides only its width."""
    a = eps / m - m / 2
    digits = _GDP_DIGITS + (max(0, math.ceil(_log10_abs(a * a))) if a else 0)
    while True:
        v = _gdp_delta_bracket(m, eps, min(digits, _GDP_MAX_DIGITS))
        if decided(v) or digits >= _GDP_MAX_DIGITS:
            return v
        ar = Arith.at(min(digits, _GDP_MAX_DIGITS))
        if v.lo > 0 and ar.up.subtract(v.hi, v.lo) <= ar.dn.multiply(v.lo, _GDP_RELATIVE_WIDTH):
            return v
        digits *= 2


def gdp_to_dp_epsilon(mu: Number | GDP, delta: Number) -> Fraction:
    """Upper bound on ε with μ-GDP ⇒ (ε, δ)-DP (Dong, Roth, Su 2022, Cor. 2.13, whose δ(ε)
    is exact): a multiple of 1e-12 found by bisection on rigorous enclosures of δ(ε)
    (:func:`_gdp_delta_enclosure`).  ``mu`` may be a number or a
    :class:`~odp.guarantees.GDP`.

    Slack, exactly: with ``ε*(δ)`` the smallest multiple of 1e-12 whose exact δ(ε) is ``<= δ``,
    the result ``r`` satisfies ``ε*(δ) <= r <= ε*(δ·(1 − 2·10^−32))`` — it is ``ε*(δ)`` unless
    the exact δ one grid step below ``r`` lies within a relative ``2·10^−32`` of ``δ`` (there the
    enclosure cannot tell them apart and the grid point is refused).  Every accepted grid point
    has a rigorous enclosure of δ(ε) below δ, so ``r`` is always an upper bound.  Works in time
    for every μ and δ odp accepts (1e-300 to 1e300; ``ε`` above 1e6 is refused)."""
    m = _gdp_mu(mu)
    d = _positive_delta(delta)
    if m == 0:
        return Fraction(0)
    log_inv_d = log_bracket(1 / d)[1]

    def ok(e: Fraction) -> bool:
        a = e / m - m / 2
        if a > 0 and a * a / 2 >= log_inv_d:  # δ(e) <= Q(a) <= e^{−a²/2}/2 < δ
            return True
        d_iv = Arith.at(_GDP_DIGITS).of(d)
        v = _gdp_delta_enclosure(m, e, lambda v: v.hi <= d_iv.lo or v.lo > d_iv.hi)
        return v.hi <= d_iv.lo

    if ok(Fraction(0)):
        return Fraction(0)
    hi = ceil_fraction(max(Fraction(1), m * m), ROUNDING_DENOMINATOR)
    while not ok(hi):
        hi *= 2
        if hi > 10**6:
            raise InvalidParameter(f"μ = {m} needs ε above 1e6 at δ = {d}; no useful bound")
    return bisect_on_grid(ok, Fraction(0), hi, ROUNDING_DENOMINATOR)  # not ok(0), ok(hi)


class Conversion(NamedTuple):
    """A privacy guarantee converted to (ε, δ)-DP: ``epsilon`` (an upper bound), ``delta``
    (the δ spent on the conversion) and ``record`` — what a ledger records about the original
    notion (exact text): ``notion`` (``zcdp``, ``rdp`` or ``gdp``), its parameters, the order
    used for RDP, ``delta_used`` and the ``conversion`` theorem."""

    epsilon: Fraction
    delta: Fraction
    record: dict[str, Any]


def to_dp(guarantee: Convertible, delta: Number) -> Conversion:
    """Convert a :class:`~odp.guarantees.ZCDP` (δ = 0), an :class:`~odp.guarantees.RDP`, a list
    of RDP values of one mechanism at several orders, or a :class:`~odp.guarantees.GDP` to
    (ε, δ)-DP at the given δ (> 0), with :func:`zcdp_to_dp_epsilon`,
    :func:`rdp_to_dp_epsilon` / :func:`best_rdp_to_dp` or :func:`gdp_to_dp_epsilon`."""
    d = _positive_delta(delta)
    rec: dict[str, Any]
    if isinstance(guarantee, ZCDP):
        eps = zcdp_to_dp_epsilon(guarantee, d)
        rec = {"notion": "zcdp", "rho": str(guarantee.rho),
               "conversion": "min(Bun-Steinke 2016 Prop. 1.3, CKS 2020 RDP->DP at the best order)"}
    elif isinstance(guarantee, RDP):
        eps = rdp_to_dp_epsilon(guarantee, d)
        rec = {"notion": "rdp", "alpha": str(guarantee.alpha),
               "rdp_epsilon": str(guarantee.epsilon),
               "conversion": "Canonne-Kamath-Steinke 2020 / Balle et al. 2020 Thm. 21"}
    elif isinstance(guarantee, (list, tuple)) and guarantee and all(
            isinstance(g, RDP) for g in guarantee):
        eps, alpha = best_rdp_to_dp(list(guarantee), d)
        rec = {"notion": "rdp", "curve": [[str(g.alpha), str(g.epsilon)] for g in guarantee],
               "alpha": str(alpha),
               "conversion": "Canonne-Kamath-Steinke 2020 / Balle et al. 2020 Thm. 21, best order"}
    elif isinstance(guarantee, GDP):
        eps = gdp_to_dp_epsilon(guarantee, d)
        rec = {"notion": "gdp", "mu": str(guarantee.mu),
               "conversion": "Dong-Roth-Su 2022 Cor. 2.13"}
    else:
        raise InvalidParameter(
            f"cannot convert {guarantee!r} to (ε, δ)-DP: expected odp.ZCDP, odp.RDP, a list of "
            "odp.RDP (one mechanism at several orders) or odp.GDP")
    rec["delta_used"] = str(d)
    return Conversion(eps, d, rec)


def pure_dp_to_zcdp(epsilon: Any) -> Fraction:
    """ρ = ε²/2: an ε-DP mechanism is (ε²/2)-zCDP (Bun & Steinke 2016, Prop. 1.4).  Exact."""
    eps = parse_epsilon(epsilon)
    return eps * eps / 2


def pure_dp_to_rdp(epsilon: Any, alpha: Any) -> Fraction:
    """ε(α) = min(ε, αε²/2): an ε-DP mechanism is (α, ε(α))-RDP.  Exact.

    ``D_α ≤ D_∞ ≤ ε`` (Rényi divergences increase with the order) and ε²/2-zCDP (Prop. 1.4)."""
    eps = parse_epsilon(epsilon)
    a = parse_alpha(alpha)
    return min(eps, a * eps * eps / 2)


def zcdp_to_rdp(rho: Any, alpha: Any) -> Fraction:
    """ε(α) = αρ: ρ-zCDP is (α, αρ)-RDP for every α > 1 (Bun & Steinke 2016, Def. 1.1)."""
    r = parse_epsilon(rho, name="rho")
    return parse_alpha(alpha) * r


def gaussian_zcdp(sigma: Any, sensitivity: Any = 1) -> Fraction:
    """ρ = Δ²/(2σ²) of the Gaussian mechanism N(0, σ²) with L2-sensitivity Δ (Bun & Steinke
    2016, Prop. 1.6).  Exact."""
    s = parse_positive(sigma, name="sigma")
    d = parse_positive(sensitivity, name="sensitivity")
    return d * d / (2 * s * s)


def gaussian_rdp(sigma: Any, sensitivity: Any, alpha: Any) -> Fraction:
    """ε(α) = αΔ²/(2σ²) of the Gaussian mechanism (Mironov 2017, Table II).  Exact."""
    return parse_alpha(alpha) * gaussian_zcdp(sigma, sensitivity)


def discrete_gaussian_zcdp(sigma2: Any, sensitivity: Any = 1) -> Fraction:
    """ρ = Δ²/(2σ²) of the discrete Gaussian N_ℤ(0, σ²) with integer sensitivity Δ, for
    ``sigma2 = σ²`` (Canonne, Kamath, Steinke 2020, Thm. 4).  Exact."""
    s2 = parse_positive(sigma2, name="sigma2")
    d = parse_positive(sensitivity, name="sensitivity")
    if d.denominator != 1:
        raise InvalidParameter("the discrete Gaussian needs an integer sensitivity")
    return d * d / (2 * s2)


def laplace_rdp(scale: Any, sensitivity: Any, alpha: Any) -> Fraction:
    """Upper bound on the order-α Rényi DP of the (continuous) Laplace mechanism with scale
    ``b`` and L1-sensitivity Δ (Mironov 2017, Table II), for α > 1, with λ = b/Δ:

        ε(α) = 1/(α−1) · ln( α/(2α−1) · e^{(α−1)/λ} + (α−1)/(2α−1) · e^{−α/λ} ).

    Evaluated with upper brackets of every exponential and the logarithm, then rounded up."""
    b = parse_positive(scale, name="scale")
    d = parse_positive(sensitivity, name="sensitivity")
    a = parse_alpha(alpha)
    inv_lambda = d / b
    hi1 = exp_bracket((a - 1) * inv_lambda)[1]
    hi2 = exp_bracket(-a * inv_lambda)[1]
    inner_hi = a / (2 * a - 1) * hi1 + (a - 1) / (2 * a - 1) * hi2
    value = log_bracket(inner_hi)[1] / (a - 1)
    # D_α ≤ D_∞ = Δ/b: never report more than the pure-DP ε
    return min(ceil_fraction(max(value, Fraction(0)), ROUNDING_DENOMINATOR), inv_lambda)


def mechanism_zcdp(mechanism: Any) -> Fraction:
    """ρ for an odp mechanism, from its declared parameters (never from data):

    * :class:`odp.GaussianMechanism` (discrete Gaussian of variance ``sigma2_units`` in grid
      units, integer sensitivity ``units``): ρ = units²/(2·sigma2_units) (CKS 2020, Thm. 4);
    * any mechanism declaring pure ``DP(ε, 0)`` (Laplace, randomized response): ρ = ε²/2.
    """
    from .mechanisms.noise import GaussianMechanism  # local: mechanisms import samplers etc.

    if isinstance(mechanism, GaussianMechanism):
        return discrete_gaussian_zcdp(mechanism.sigma2_units, mechanism.units)
    guarantee = getattr(mechanism, "guarantee", None)
    delta = getattr(guarantee, "delta", None)
    sup = getattr(guarantee, "sup_epsilon", None)
    if guarantee is None or delta is None or sup is None:
        raise InvalidParameter(f"{mechanism!r} declares no guarantee to convert")
    if delta != 0:
        raise InvalidParameter(
            f"{mechanism!r} declares δ={delta} > 0: an (ε, δ)-DP guarantee does not imply "
            "zCDP; give the mechanism's own zCDP bound instead"
        )
    return pure_dp_to_zcdp(sup)
