"""Privacy buckets: sound upper *and* lower bounds on the tight (ε, δ) of r-fold composition.

Implements Meiser & Mohammadi, "Tight on Budget? Tight Bounds for r-Fold Approximate
Differential Privacy" (CCS 2018; docs/references.md), with a clean-room soundness design
(see ``docs/buckets.md``):

* :mod:`~odp.buckets.mechanisms` -- worst-case pairs (A, B): :class:`Gaussian` (from CDF
  differences, so the bound holds for the continuous mechanism), :class:`Laplace`,
  :class:`PLDRandomizedResponse`, :class:`ApproximateDP` (the generic (ε, δ) worst case, i.e. the
  optimal composition theorem), :class:`DiscreteLaplace`, :class:`DiscreteGaussian`,
  :class:`FinitePair` (any two distributions on a finite set);
* :mod:`~odp.buckets.subsampled` -- :class:`PoissonSubsampled` (a Gaussian or Laplace mechanism
  on a Poisson subsample, add/remove neighbours: DP-SGD), with :func:`poisson_gaussian` and
  :func:`poisson_laplace`; :func:`from_dp_event` (:mod:`~odp.buckets.dp_events`) reads
  dp-accounting's ``DpEvent`` trees;
* :mod:`~odp.buckets.cells` -- the paper's buckets with factor f (loss rounded up), the
  infinity bucket, the P_B = 0 mass and the error-correction terms;
* :mod:`~odp.buckets.state` -- the two bucketed pairs that bracket the truth (a dominating
  pair on grid points for the upper bound, the exact-mass buckets for the lower bound),
  truncation and coarsening (f -> f²);
* :mod:`~odp.buckets.compose` -- composition by FFT convolution with a rigorous round-off
  bound, r-fold composition by repeated squaring;
* :mod:`~odp.buckets.readoff` -- δ(ε) and ε(δ) as upper and lower bounds;
* :mod:`~odp.buckets.accountant` -- :class:`PrivacyBucketsAccountant` with
  ``compose(mechanism, count=1)``, ``get_epsilon(delta)`` and ``get_delta(epsilon)`` (a float
  upper bound, rounded up: dp-accounting's convention), and ``get_epsilon_interval`` /
  ``get_delta_interval`` returning an :class:`Interval` ``(lower, upper)`` of exact rationals;
* :mod:`~odp.buckets.spec` -- compositions of several mechanisms from a JSON/TOML spec or
  command-line groups; :mod:`~odp.buckets.tighten` -- more buckets until a target width.

Both directions (A ‖ B) and (B ‖ A) are composed (unless every pair is symmetric) and the worse
is reported.  Composition is of *fixed* pairs, chosen in advance (non-adaptive parameters).

**Stable functions for other modules** (e.g. the iterative-mechanism ODP bound, Hartmann et al. 2022
Lemma 11, which needs a composition theorem)::

    composition_delta_upper(mechanisms, epsilon, **options) -> Fraction
    composition_epsilon_upper(mechanisms, delta, **options) -> Fraction

``mechanisms`` is a sequence of :class:`PLDMechanism` objects or ``(PLDMechanism, count)`` pairs,
composed in order (heterogeneous compositions are fine).  The result is a rigorous upper bound
on the tight δ(ε) (resp. the smallest ε with δ(ε) <= delta) of the composition, rounded *up* to
a short rational.  ``options`` are those of :class:`PrivacyBucketsAccountant` (``buckets``,
``factor``, ``tail_mass``, ``rounding``).  ``composition_epsilon_upper`` raises
:class:`~odp.errors.InvalidParameter` when no finite ε exists.

Example::

    >>> from odp.buckets import PrivacyBucketsAccountant, Gaussian
    >>> acc = PrivacyBucketsAccountant().compose(Gaussian(sigma=1), count=1000)
    >>> lo, up = acc.get_epsilon_interval("1e-5")
    >>> 633.92 < float(lo) <= 633.9299 <= float(up) < 633.94
    True
    >>> acc.get_epsilon(1e-5) == float(up)   # a float upper bound (rounded up)
    True
"""

from __future__ import annotations

from .accountant import (
    DEFAULT_BUCKETS,
    DEFAULT_TAIL_MASS,
    Interval,
    PrivacyBucketsAccountant,
    composition_delta_upper,
    composition_epsilon_upper,
)
from .mechanisms import (
    ApproximateDP,
    DiscreteGaussian,
    DiscreteLaplace,
    FinitePair,
    Gaussian,
    Laplace,
    PLDMechanism,
    PLDRandomizedResponse,
    mechanism_from_dict,
)
from .subsampled import PoissonSubsampled, poisson_gaussian, poisson_laplace
from .dp_events import from_dp_event

__all__ = [
    "DEFAULT_BUCKETS",
    "DEFAULT_TAIL_MASS",
    "Interval",
    "PrivacyBucketsAccountant",
    "composition_delta_upper",
    "composition_epsilon_upper",
    "PLDMechanism",
    "Gaussian",
    "Laplace",
    "PLDRandomizedResponse",
    "ApproximateDP",
    "DiscreteLaplace",
    "DiscreteGaussian",
    "FinitePair",
    "PoissonSubsampled",
    "poisson_gaussian",
    "poisson_laplace",
    "from_dp_event",
    "mechanism_from_dict",
]

