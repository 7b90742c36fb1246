"""The public top level of ``odp``: a short, grouped list; everything else in its subpackage."""

from __future__ import annotations

import types

import odp

#: ``odp.__all__``, group by group, in order.  A name added here must be one a newcomer needs
#: before reading any subpackage; the rest belong to their subpackage.
GROUPS = {
    "the accountant, its budget and its neighbouring relation": ["Accountant", "Reservation",
                                                                 "Budget", "Lane", "Neighbours"],
    "guarantees": ["DP", "ODP", "SubsetDP", "ZCDP", "RDP", "GDP"],
    "mechanisms and randomness": ["Mechanism", "BOTTOM", "LaplaceMechanism", "GaussianMechanism",
                                  "RandomizedResponse", "ToyMechanism", "from_opendp",
                                  "SecureRandom", "SeededRandom"],
    "errors": ["OdpError", "InvalidParameter", "InvalidBudget", "InvalidGuarantee",
               "BudgetExceeded", "LedgerError", "LedgerCorrupted", "CertificateError"],
}


def test_all_is_the_grouped_list_and_short():
    expected = [name for group in GROUPS.values() for name in group]
    assert odp.__all__ == expected
    assert len(odp.__all__) <= 30
    assert len(set(odp.__all__)) == len(odp.__all__)


def test_all_is_exactly_what_import_odp_exposes():
    """Every public non-module attribute of ``odp`` is in ``__all__`` and every name of
    ``__all__`` is an attribute (no stray ``annotations`` or helper left behind)."""
    public = {name for name, value in vars(odp).items()
              if not name.startswith("_") and not isinstance(value, types.ModuleType)}
    assert public == set(odp.__all__)
    assert odp.__version__ == "0.1.0"


def test_everything_else_is_reached_through_its_subpackage():
    import odp.buckets
    import odp.composition
    import odp.conversions
    import odp.dpsgd
    import odp.filters
    import odp.interactive
    import odp.mechanisms
    import odp.optdel

    reached = [
        odp.filters.BasicFilter, odp.filters.WhitehouseOdometer, odp.filters.ODPFilter,
        odp.composition.BasicComposition, odp.composition.BucketsComposition,
        odp.composition.PrefixDeltaSum, odp.composition.OptimalDelta, odp.composition.StepSpec,
        odp.buckets.PrivacyBucketsAccountant, odp.optdel.optdel_upper,
        odp.conversions.to_dp, odp.conversions.pure_dp_to_zcdp, odp.dpsgd.Accounting,
        odp.mechanisms.SparseVectorMechanism, odp.mechanisms.IterativeMechanism,
        odp.interactive.ConcurrentComposition, odp.errors.LedgerUnavailable,
    ]
    assert all(callable(x) for x in reached)
    for name in ("PrivacyBucketsAccountant", "SparseVectorMechanism", "ConcurrentComposition",
                 "BasicFilter", "StepSpec", "PrefixDeltaSum", "OptimalDelta"):
        assert not hasattr(odp, name), name


def test_lemma_named_aliases_only_in_their_subpackage():
    """The δ rules are named for what they compute; the paper's names (Hartmann et al. 2022,
    Lemma 11 and Thm. 15's OptDel) are aliases in :mod:`odp.composition` only, and the JSON the
    rules write is unchanged."""
    from odp.composition import Lemma11, OptDel, OptimalDelta, PrefixDeltaSum

    assert Lemma11 is PrefixDeltaSum and OptDel is OptimalDelta
    assert not hasattr(odp, "Lemma11") and not hasattr(odp, "OptDel")
    assert PrefixDeltaSum().to_json() == {"name": "lemma11",
                                          "composition": {"name": "basic"}}
    assert OptimalDelta().to_json() == {"name": "optdel"}


def test_conversions_have_one_home():
    """:mod:`odp.conversions` defines every conversion it exports (none is re-exported)."""
    import odp.conversions as cv

    for name in cv.__all__:
        value = getattr(cv, name)
        if callable(value) and hasattr(value, "__module__"):
            assert value.__module__ == "odp.conversions", name


def test_no_public_constructor_takes_a_test_hook():
    """Test hooks (a fixed clock, a given ledger id, skipping a check) live in private
    constructors (``SQLiteLedger._open``, ``PostgresLedger._open``,
    ``odp.ledger.postgres._init_ledger``), never as ``_``-prefixed parameters of a public class's
    constructor or of a public function of the ledger."""
    import ast
    from pathlib import Path

    root = Path(odp.__file__).parent
    offenders = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == "_lean_rules.py":  # generated from the Lean source, Lean's parameter names
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        functions = [(f"{node.name}.{f.name}", f)
                     for node in tree.body
                     if isinstance(node, ast.ClassDef) and not node.name.startswith("_")
                     for f in node.body
                     if isinstance(f, ast.FunctionDef) and f.name in ("__init__", "__new__")]
        if rel.startswith("ledger/"):
            functions += [(node.name, node) for node in tree.body
                          if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")]
        for name, func in functions:
            args = func.args
            hooks = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs
                     if a.arg.startswith("_")]
            if hooks:
                offenders.append(f"{rel}: {name}({', '.join(hooks)})")
    assert offenders == []
