"""Bucketing one pair of distributions (A, B) by privacy loss: the paper's buckets (§3).

Meiser & Mohammadi (CCS 2018, "Tight on budget?") put every atomic event x with P_A(x) > 0 into
the bucket of its privacy loss L(x) = ln(P_A(x)/P_B(x)) on a grid with factor f, i.e. step
``h = ln f``: bucket ``i`` holds the events with ``(i-1)h < L(x) <= ih`` (loss rounded *up* to
the bucket's top).  :class:`Cells` is that bucketing for one direction, A against B:

* ``a[i]``: the A-mass of bucket ``i`` (the paper's ``B(i)``);
* ``bhat[i] = exp(i*h) * (B-mass of bucket i)``: the B-mass, scaled so that it is comparable to
  ``a[i]``.  Since every event in the bucket has loss in ``((i-1)h, ih]``,
  ``a[i] <= bhat[i] <= f * a[i]``.  ``bhat - a`` is the paper's error-correction term
  ``er(i)`` times ``f**i`` (its §4.1): it is what makes both bounds tight;
* ``excess[i] = bhat[i] - a[i] >= 0``: the same information as ``bhat``, computed directly
  (optional; without it the split in :mod:`~odp.buckets.state` loses accuracy for narrow buckets);
* ``atom[i]``: A-mass of atoms whose loss is *exactly* ``ih`` (kept apart from ``a``/``bhat``, which
  hold the rest of the bucket; for such an atom the scaled B-mass equals the A-mass exactly);
* ``inf_a``: A-mass of *distinguishing* events (``P_B = 0``, infinite loss);
* ``top_a``/``bottom_a``: A-mass with finite loss above the last / below the first bucket (the
  paper's infinity bucket and its lowest bucket take them; see :mod:`odp.buckets.state`).

Each mass carries a bound on its *relative* floating-point error (``rel_*``), so that the final
bounds can be widened by exactly what rounding could have changed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._numerics import ELEMENTARY_ULPS, U


@dataclass
class Cells:
    """Privacy-loss buckets of one direction (A ‖ B) on the grid ``i*h``.

    Bucket ``first + j`` is stored at position ``j`` of ``a``, ``bhat``, ``rel_a``, ``rel_b``.
    """

    h: float
    first: int
    a: np.ndarray
    bhat: np.ndarray
    rel_a: np.ndarray
    rel_b: np.ndarray
    inf_a: float = 0.0
    rel_inf: float = 0.0
    top_a: float = 0.0
    bottom_a: float = 0.0
    rel_tails: float = 0.0
    atom: np.ndarray | None = None
    rel_atom: np.ndarray | float = 0.0
    #: ``bhat - a`` computed without cancellation (it is small for narrow buckets and decides how
    #: a bucket is split between its two grid points), with an absolute error bound per bucket
    excess: np.ndarray | None = None
    err_excess: np.ndarray | None = None

    def __post_init__(self):
        if self.atom is None:
            self.atom = np.zeros_like(self.a)

    @property
    def last(self) -> int:
        return self.first + len(self.a) - 1


def cells_from_atoms(
    h: float,
    a: np.ndarray,
    rel_a: np.ndarray,
    *,
    log_b: np.ndarray | None = None,
    rel_log_b: np.ndarray | None = None,
    lattice: float | None = None,
    n: np.ndarray | None = None,
    inf_a: float = 0.0,
    rel_inf: float = 0.0,
    nearest: bool = False,
) -> Cells:
    """Bucket a finite list of atoms (events with A-mass ``a``).

    The loss of each atom is given either *exactly* on a lattice, ``L = n * lattice`` (integers
    ``n``; then the B-mass is ``a * exp(-L)`` by construction), or through ``log_b`` (natural log
    of the B-mass, with absolute error ``rel_log_b``).  Atoms with ``a == 0`` are dropped (they
    cannot contribute to δ in this direction).  Distinguishing mass goes in ``inf_a``.

    ``nearest=True`` (for the lower pair, which does not need the rounding-up convention) puts
    each atom at the *nearest* grid point instead of the next one up: then ``bhat/a`` stays
    within ``e^{±h/2}`` and does not drift under composition.
    """
    a = np.asarray(a, dtype=float)
    rel_a = np.broadcast_to(np.asarray(rel_a, dtype=float), a.shape)
    keep = a > 0
    akeep = a[keep]
    ra = rel_a[keep]
    p = None
    if lattice is not None:
        n_arr = np.asarray(n, dtype=np.int64)[keep]
        ratio = h / lattice
        p = int(round(np.log2(ratio)))
        if 2.0**p != ratio:
            p = None  # grid not commensurate with the lattice: use the generic path
    if p is not None and nearest and p > 0:
        p = None  # the generic path below does nearest rounding
    if p is not None:
        if p >= 0:
            step = 2**p
            idx = -((-n_arr) // step)  # ceil(n / 2**p), exact integer arithmetic
            m = idx * step - n_arr  # in [0, 2**p): loss is (idx*h) - m*lattice exactly
            bhat = akeep * np.exp(m * lattice)
            rb = ra + ELEMENTARY_ULPS * U * (1.0 + m * lattice)
            exc = akeep * np.expm1(m * lattice)
            err_exc = exc * (ra + 2 * ELEMENTARY_ULPS * U * (1.0 + m * lattice))
            on_grid = m == 0
        else:
            idx = n_arr * 2 ** (-p)  # on the grid exactly: bhat = a exactly
            bhat = akeep.copy()
            rb = ra.copy()
            exc = np.zeros_like(akeep)
            err_exc = np.zeros_like(akeep)
            on_grid = np.ones(idx.shape, dtype=bool)
    else:
        if log_b is None:  # exact lattice losses on a non-commensurate grid
            n_f = np.asarray(n, dtype=float)[keep]
            with np.errstate(divide="ignore"):
                log_b = np.log(akeep) - n_f * lattice
            rlb = ra + ELEMENTARY_ULPS * U * (1.0 + np.abs(np.log(akeep)) + np.abs(n_f * lattice))
        else:
            log_b = np.asarray(log_b, dtype=float)[keep]
            rlb = np.broadcast_to(
                np.asarray(rel_log_b if rel_log_b is not None else 0.0, dtype=float), a.shape
            )[keep]
        finite = np.isfinite(log_b)
        if not finite.all():  # B-mass 0: distinguishing events
            inf_a = inf_a + float(akeep[~finite].sum())
            rel_inf = max(rel_inf, float(ra[~finite].max()) + akeep.size * U)
            akeep, ra, log_b, rlb = akeep[finite], ra[finite], log_b[finite], rlb[finite]
        loss = np.log(akeep) - log_b
        idx = (np.rint(loss / h) if nearest else np.ceil(loss / h)).astype(np.int64)
        expo = log_b + idx * h
        bhat = np.exp(expo)
        rb = rlb + ELEMENTARY_ULPS * U * (1.0 + np.abs(log_b) + np.abs(idx * h))
        x = expo - np.log(akeep)  # idx*h - loss, in [0, h] up to rounding
        err_x = rlb + ra + ELEMENTARY_ULPS * U * (2.0 + np.abs(log_b) + np.abs(idx * h) + np.abs(np.log(akeep)))
        exc = akeep * np.expm1(x)
        err_exc = akeep * np.exp(np.abs(x) + err_x) * err_x + np.abs(exc) * ELEMENTARY_ULPS * U
        on_grid = np.zeros(idx.shape, dtype=bool)
    if akeep.size == 0:
        return Cells(h, 0, np.zeros(1), np.zeros(1), np.zeros(1), np.zeros(1), inf_a, rel_inf)
    first = int(idx.min())
    size = int(idx.max()) - first + 1
    pos = idx - first
    off = ~on_grid
    cell_a = np.bincount(pos[off], weights=akeep[off], minlength=size)
    cell_b = np.bincount(pos[off], weights=bhat[off], minlength=size)
    cell_atom = np.bincount(pos[on_grid], weights=akeep[on_grid], minlength=size)
    cell_exc = np.bincount(pos[off], weights=exc[off], minlength=size)
    cell_err_exc = np.bincount(pos[off], weights=err_exc[off], minlength=size) * (1 + 4 * U * size)
    counts = np.bincount(pos, minlength=size)
    rel_ca = np.zeros(size)
    rel_cb = np.zeros(size)
    rel_at = np.zeros(size)
    np.maximum.at(rel_ca, pos[off], ra[off])
    np.maximum.at(rel_cb, pos[off], rb[off])
    np.maximum.at(rel_at, pos[on_grid], ra[on_grid])
    rel_ca += counts * U
    rel_cb += counts * U
    rel_at += counts * U
    return Cells(
        h, first, cell_a, cell_b, rel_ca, rel_cb, inf_a, rel_inf, atom=cell_atom, rel_atom=rel_at,
        excess=cell_exc, err_excess=cell_err_exc,
    )
