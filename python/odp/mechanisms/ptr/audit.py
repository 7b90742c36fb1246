"""The exact output distribution of ``M_IQR`` (:func:`iqr_output_distribution`), against which
``tests/test_ptr.py`` checks Lemma 10's declared guarantee on every neighbouring pair of small
databases."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Sequence

from ...errors import InvalidParameter
from ...samplers import discrete_laplace_tail
from ..window import clamped_laplace_law
from .mechanism import IQRMechanism, _quartile_ranks, _sorted_values, stability

__all__ = ["iqr_output_distribution", "FULL_WINDOW"]

#: Index windows up to this size are listed in full by :func:`iqr_output_distribution`.
FULL_WINDOW = 1000


def iqr_output_distribution(mechanism: IQRMechanism, data: Sequence[Any], *,
                            r_test: Any = None, r_release: Any = None,
                            threshold: int | None = None,
                            window: tuple[int, int] | None = None) -> dict[Any, Any]:
    """The exact output distribution of :class:`IQRMechanism` on ``data``, clamp included.

    Outputs: ``"bottom"``, ``(d, ĵ)`` for discretisation ``d`` and released (clamped) index
    ``ĵ`` in ``window = (lo, hi)`` (``(d, "zero")`` when the IQR is 0), and the two tails
    ``(d, "<")``, ``(d, ">")`` lumped when the window does not reach the end of the
    mechanism's index window (:func:`odp.mechanisms.window.clamped_laplace_law`; inside a tail
    the likelihood ratio between two databases whose unnoised indices lie in the window is
    constant, so lumping does not change ``Σ_o (p(o) − c·q(o))₊``).  Without ``window``, the
    whole index window when it has at most :data:`FULL_WINDOW` indices (every output listed),
    else the unnoised index alone.  Noise parameters default to the mechanism's own
    (``r = e^{−1/scale}`` as floats); pass rational ``r_test`` / ``r_release`` (and the matching
    ``threshold`` K) for an exact rational distribution."""
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
        clamp = fn.index_window(offset)
        a = stability(xs, grid)
        passes = discrete_laplace_tail(k + 1 - a, r_test)
        mass = stay * passes
        if iqr == 0:
            out[(d, "zero")] = mass
        elif fn.release_scale is None:
            out[(d, clamp.clamp(grid.sub_index(iqr)))] = mass
        else:
            j = grid.sub_index(iqr)
            if window is not None:
                view = window
                if not view[0] <= j <= view[1]:
                    raise InvalidParameter(f"window {window} must contain the index {j}")
            elif clamp.size <= FULL_WINDOW:
                view = (clamp.lo, clamp.hi)
            else:
                view = (clamp.clamp(j), clamp.clamp(j))
            for y, p in clamped_laplace_law(j, r_release, clamp, view).items():
                out[(d, y)] = mass * p
        stay = stay * (1 - passes)
    out["bottom"] = stay
    return out
