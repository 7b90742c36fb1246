"""A discrete pair's support is built as few times as possible (review finding 6).

DiscreteGaussian(σ = 30000) took 5.7 s against an estimate of 0.71 s: its atoms (3.5e6 work
items) were built four times (the loss range at compose time and again when building, then the
upper and the lower buckets) and the normaliser was summed with math.fsum (2 s alone).  Now the
loss range is remembered, one build serves both bounds, and the sum is numpy's pairwise sum with
its error bound.  (Timings belong in bench/; here the builds are counted.)
"""

from __future__ import annotations

from odp.buckets import DiscreteGaussian, FinitePair, PrivacyBucketsAccountant
from test_buckets_refs import (
    discrete_gaussian_masses,
    finite_delta_exact,
    lattice_kfold_delta,
    mpf,
)


def _counting(monkeypatch, cls):
    calls = []
    original = cls._atoms

    def counted(self, reverse, tail=0.0, side="upper"):
        calls.append((reverse, side))
        return original(self, reverse, tail, side)

    monkeypatch.setattr(cls, "_atoms", counted)
    return calls


def test_discrete_gaussian_atoms_are_built_twice_not_four_times(monkeypatch):
    calls = _counting(monkeypatch, DiscreteGaussian)
    acc = PrivacyBucketsAccountant().compose(DiscreteGaussian(3), 2)
    assert len(calls) == 1  # the loss range, checked when composing
    iv = acc.get_delta_interval("0.05")
    assert len(calls) == 2  # one more build for both the upper and the lower buckets
    # and the answer is still right: 2-fold discrete Gaussian (σ = 3) on its loss lattice
    masses = discrete_gaussian_masses(3)
    exact = lattice_kfold_delta(masses, mpf(1) / 18, 2, "0.05")
    assert mpf(iv.lower) <= exact <= mpf(iv.upper)
    assert mpf(iv.upper) - mpf(iv.lower) < 1e-6 * exact


def test_finite_pair_shares_its_atoms_between_the_bounds(monkeypatch):
    calls = _counting(monkeypatch, FinitePair)
    p, q = ["0.5", "0.3", "0.2"], ["0.2", "0.3", "0.5"]  # symmetric: one direction
    acc = PrivacyBucketsAccountant().compose(FinitePair(p, q), 3)
    acc.get_delta_interval("0.5")
    assert len(calls) == 2
    iv = acc.get_delta_interval("1")  # later queries build nothing
    assert len(calls) == 2
    exact = finite_delta_exact(p, q, 3, "1")
    assert mpf(iv.lower) <= exact <= mpf(iv.upper) and iv.upper - iv.lower < 1e-9
