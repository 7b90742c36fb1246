"""The exact output distribution of ``M_IQR`` (:func:`iqr_output_distribution`), against which
``tests/test_ptr.py`` checks Lemma 10's declared guarantee on every neighbouring pair of small
databases."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Sequence

from ...errors import InvalidParameter
from ...samplers import discrete_laplace_tail
from .mechanism import IQRMechanism, _quartile_ranks, _sorted_values, stability

__all__ = ["iqr_output_distribution"]


def iqr_output_distribution(mechanism: IQRMechanism, data: Sequence[Any], *,
                            r_test: Any = None, r_release: Any = None,
                            threshold: int | None = None,
                            window: tuple[int, int] | None = None) -> dict[Any, Any]:
    """The exact output distribution of :class:`IQRMechanism` on ``data``.

    Outputs: ``"bottom"``, ``(d, ĵ)`` for discretisation ``d`` and released index ``ĵ`` in
    ``window = (lo, hi)`` (``(d, "zero")`` when the IQR is 0), and the two tails ``(d, "<")``,
    ``(d, ">")`` lumped (inside a tail
    the likelihood ratio between two databases whose unnoised indices lie in the window is
    constant, so lumping does not change ``Σ_o (p(o) − c·q(o))₊``).  Noise parameters default
    to the mechanism's own (``r = e^{−1/scale}`` as floats); pass rational ``r_test`` /
    ``r_release`` (and the matching ``threshold`` K) for an exact rational distribution."""
    fn = mechanism.function
    if r_test is None:
        r_test = math.exp(-float(fn.epsilon))
    if r_release is None and fn.release_scale is not None:
        r_release = math.exp(-1 / float(fn.release_scale))
    k = fn.threshold if threshold is None else threshold
    xs = _sorted_values(data)
    lo_r, hi_r = _quartile_ranks(len(xs))
    iqr = xs[hi_r - 1] - xs[lo_r - 1]
    out: dict[Any, Any] = {}
    stay = 1 + 0 * r_test  # P(all discretisations so far returned ⊥)
    for d, offset in ((1, Fraction(0)), (2, Fraction(1, 2))):
        grid = fn.grid(offset)
        a = stability(xs, grid)
        passes = discrete_laplace_tail(k + 1 - a, r_test)
        mass = stay * passes
        if iqr == 0:
            out[(d, "zero")] = mass
        elif fn.release_scale is None:
            j = grid.sub_index(iqr)
            out[(d, j)] = mass
        else:
            j = grid.sub_index(iqr)
            lo, hi = window if window is not None else (j, j)
            if not lo <= j <= hi:
                raise InvalidParameter(f"window {window} must contain the index {j}")
            c = (1 - r_release) / (1 + r_release)
            for y in range(lo, hi + 1):
                out[(d, y)] = mass * c * r_release ** abs(y - j)
            out[(d, "<")] = mass * c * r_release ** (j - lo + 1) / (1 - r_release)
            out[(d, ">")] = mass * c * r_release ** (hi + 1 - j) / (1 - r_release)
        stay = stay * (1 - passes)
    out["bottom"] = stay
    return out
