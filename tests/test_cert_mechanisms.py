"""Certificates bound to the mechanisms: each round's ``mech`` row, the
Lean cost functions (``Odp/LedgerCore.lean``, through the generated checker) against each Python
mechanism's declared guarantee, the two forgeries of the issue, and the per-round report.

The Lean-side comparison uses only the generated module (``odp._lean_rules``): ``mechOk`` and
the cost functions it calls are translated from the Lean text, never copied by hand.  No test
here assumes that a theorem of ``Odp/Mech`` exists: a round counts as proved only when the
theorem is in ``odp._lean_rules.LEAN_THEOREMS`` (read from the compiled Lean sources).
"""

from __future__ import annotations

import json
import sqlite3
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from ledger_forgery import rewrite_events

import odp
from odp import _lean_rules as lean
from odp.certs import certificate_of, mechanisms, verify
from odp.certs.format import parse
from odp.certs.lean import OdpCheckProcess
from odp.certs.units import common_denominator, in_units
from odp.cli import main
from odp.composition import (BucketsComposition, OptimalDelta, PrefixDeltaSum,
                             RDPComposition, ReplaceOneComposition, StepSpec)
from odp.errors import CertificateError, InvalidParameter
from odp.guarantees import as_odp
from odp.mechanisms.dpsgd import DPSGD, LogisticRegressionModel
from odp.mechanisms.erm import OutputPerturbationERM, TestedLogisticRegression
from odp.mechanisms.builtin import BUILTIN_KEY, builtin_key
from odp.mechanisms.iterative import IterativeMechanism, NoisyGradientDescent
from odp.mechanisms.noise import (GaussianMechanism, LaplaceMechanism, RandomizedResponse,
                                  ToyMechanism)
from odp.mechanisms.ptr import IQRMechanism
from odp.mechanisms.ptr.mechanism import ExponentialMedian, LogBinIQR, PTRFunction
from odp.mechanisms.svt import SparseVectorMechanism

FAKE = [sys.executable, str(Path(__file__).with_name("fake_odpcheck.py"))]

ratio = st.builds(Fraction, st.integers(1, 5000), st.integers(1, 1000))
small = st.builds(Fraction, st.integers(1, 200), st.integers(10, 1000))
prob = st.builds(lambda k, n: Fraction(k, 10**n), st.integers(1, 9), st.integers(4, 9))


def _derive(mech):
    """The ``mech`` row that ``mech``'s recorded parameters give: for odp's own mechanisms
    under the key ``Accountant.run`` records (``builtin_key``); for the test's own objects
    (a user's IterativeMechanism, the base PTRFunction) under their name, to compare their
    declared costs with the cost function of that kind (never recorded so by the accountant)."""
    key = builtin_key(mech) or mech.name
    return mechanisms.derive(mech.name, {**mech.params(), BUILTIN_KEY: key})


def _units(mech, kind: str):
    """The mechanism's declared guarantee and its derived ``mech`` row, in units of ``1/D``."""
    record = as_odp(mech.guarantee).record()
    derived = _derive(mech)
    assert derived is not None and derived.kind == kind, derived
    costs = [c for _, c in record.classes]
    d = common_denominator(costs + [record.delta] + derived.amounts())
    row = derived.row(d)
    return [in_units(c, d) for c in costs], in_units(record.delta, d), row


def _agrees(mech, kind: str):
    """``mechOk`` (generated from Lean) accepts the declared guarantee for every realised
    class and for a round charged its sup, and refuses any class cost or δ moved by one unit."""
    bs, delta, row = _units(mech, kind)
    number, ps, gs = mechanisms.lean_args(row)
    sup = max(bs)
    for k, cost in enumerate(bs):
        assert lean.mechOk(lean.Entry(sup, cost, delta), bs, True, number, ps, gs), (k, bs, row)
    assert lean.mechOk(lean.Entry(sup, sup, delta), [], False, number, ps, gs)
    for k in range(len(bs)):
        for step in (1, -1):
            bad = list(bs)
            bad[k] += step
            if bad[k] < 0:
                continue
            assert not lean.mechOk(lean.Entry(max(bad), bad[k], delta), bad, True, number, ps,
                                   gs), (k, bad, row)
    assert not lean.mechOk(lean.Entry(sup, sup, delta), bs + [0], True, number, ps, gs)
    if kind == "lemma11":  # δ must cover Σ_i δ^{k_i}: one unit below is refused
        floor = lean.stopDeltas(gs)
        assert floor <= delta
        assert lean.mechOk(lean.Entry(sup, sup, floor), bs, True, number, ps, gs)
        assert not lean.mechOk(lean.Entry(sup, sup, floor - 1), bs, True, number, ps, gs)
    elif kind != "iter_costs":  # the one kind whose δ is declared
        assert not lean.mechOk(lean.Entry(sup, sup, delta + 1), bs, True, number, ps, gs)
    assert not lean.mechOk(lean.Entry(sup + 1, sup + 1, delta), [], False, number, ps, gs)
    return bs, delta, row


@settings(max_examples=60, deadline=None)
@given(ratio)
def test_dp_mechanisms_cost_one_class(eps):
    for mech, kind in [(LaplaceMechanism(len, epsilon=eps), "laplace"),
                       (RandomizedResponse(bool, epsilon=eps), "rr"),
                       (ExponentialMedian(epsilon=eps, lower=0, upper=1), "median")]:
        bs, delta, row = _agrees(mech, kind)
        assert list(lean.dpBlocks(row.params[0])) == bs and delta == 0


@settings(max_examples=25, deadline=None)
@given(small, st.builds(Fraction, st.integers(5, 60), st.integers(1, 10)))
def test_gaussian_costs_its_epsilon_and_delta(eps, sigma):
    try:
        mech = GaussianMechanism(len, epsilon=eps, sigma=sigma)
    except InvalidParameter:
        assume(False)
    bs, delta, row = _agrees(mech, "gaussian")
    assert list(lean.dpBlocks(row.params[0])) == bs and row.params[1] == delta > 0


@settings(max_examples=15, deadline=None)
@given(small, st.integers(50, 5000), st.integers(1, 6),
       st.builds(Fraction, st.integers(1, 100), st.integers(1, 100)))
def test_erm_output_perturbation_costs_one_class(eps, n, dim, lam):
    _agrees(OutputPerturbationERM(epsilon=eps, regularization=lam, n=n, dim=dim), "erm")


@settings(max_examples=60, deadline=None)
@given(ratio)
def test_toy_costs_epsilon_on_values_and_nothing_on_bottom(eps):
    bs, delta, row = _agrees(ToyMechanism(len, epsilon=eps), "toy")
    assert list(lean.toyBlocks(row.params[0])) == bs and delta == 0


@settings(max_examples=60, deadline=None)
@given(ratio, ratio, st.integers(1, 40), st.integers(1, 5))
def test_svt_classes_follow_lemma_8(eps1, eps2, c, queries):
    mech = SparseVectorMechanism([len] * queries, 3, epsilon1=eps1, epsilon2=eps2, c=c)
    bs, delta, row = _agrees(mech, "svt")
    assert row.params[0] == c and len(bs) == c + 1 and delta == 0
    assert lean.svtFrom(*row.params, 0, bs)


@settings(max_examples=40, deadline=None)
@given(ratio, prob)
def test_ptr_functions_cost_two_eps_and_eps(eps, delta):
    bs, d, row = _agrees(PTRFunction(eps, delta).mechanism(0), "ptr")
    assert list(lean.ptrBlocks(row.params[0])) == bs and row.params[1] == d


@settings(max_examples=10, deadline=None)
@given(st.builds(Fraction, st.integers(20, 200), st.integers(100, 100)), prob)
def test_log_bin_iqr_as_a_ptr_function(eps, delta):
    _agrees(LogBinIQR(eps, delta, base=Fraction(3, 2)).mechanism(Fraction(0)), "ptr")


@settings(max_examples=10, deadline=None)
@given(st.builds(Fraction, st.integers(20, 200), st.integers(100, 100)), prob,
       st.integers(10, 10**6))
def test_iqr_costs_follow_lemma_10(eps, delta, n):
    bs, d, row = _agrees(IQRMechanism(epsilon=eps, delta=delta, n=n), "iqr")
    assert list(lean.iqrBlocks(row.params[0])) == bs and row.params[1] == d


stops_st = st.lists(st.integers(1, 12), min_size=1, max_size=5, unique=True).map(sorted)
spec_st = st.builds(StepSpec, small, st.sampled_from([0, Fraction(1, 10**7), Fraction(3, 10**6)]))


@settings(max_examples=60, deadline=None)
@given(stops_st, st.data())
def test_iterative_costs_follow_lemma_11_basic(stops, data):
    if data.draw(st.booleans()):
        steps = data.draw(st.lists(spec_st, min_size=stops[-1], max_size=stops[-1]))
    else:
        steps = data.draw(spec_st)
    mech = IterativeMechanism(lambda h, x, rng: 0, stops=stops, steps=steps)
    bs, delta, row = _agrees(mech, "iter")
    groups = [lean.StepGroup(*g) for g in row.groups]
    assert list(row.params) == stops
    assert list(lean.iterBlocks(groups, stops)) == bs and lean.iterDelta(groups, stops) == delta


@settings(max_examples=10, deadline=None)
@given(st.integers(20, 2000), st.integers(1, 5), small, stops_st)
def test_noisy_gradient_descent_is_an_iterative_mechanism(n, dim, eps, stops):
    _agrees(NoisyGradientDescent(n=n, dim=dim, epsilon_step=eps, stops=stops), "iter")


def test_iterative_with_a_numerical_delta_rule_checks_the_costs_only():
    mech = IterativeMechanism(lambda h, x, rng: 0, stops=[1, 2],
                              steps=StepSpec(Fraction(1, 2), Fraction(1, 10**6)), rule=OptimalDelta())
    _agrees(mech, "iter_costs")
    assert mechanisms.theorem_of("iter_costs") is None  # its δ is a numerical bound: declared


def _lemma11_reference(stops, steps, costs, composition):
    """The per-stop ``δ^{k_i}`` computed directly with the COMP (not through
    ``iterative_guarantee``): ``COMP(M_1..M_{k_i}; ε^{k_i})``."""
    return [Fraction(composition.delta_upper(list(steps[:k]), Fraction(c)))
            for k, c in zip(stops, costs)]


def _lemma11_row_is(mech, stops, costs, deltas):
    """The mech row of ``mech`` is ``lemma11`` with exactly these (k_i, ε^{k_i}, δ^{k_i})."""
    derived = _derive(mech)
    assert derived is not None and derived.kind == "lemma11" and derived.params == ()
    assert derived.groups == tuple(zip(stops, [Fraction(c) for c in costs], deltas))
    return _agrees(mech, "lemma11")


@pytest.mark.parametrize("costs", [None, ["1/4", "1/2"]])
def test_iterative_with_privacy_buckets_is_a_lemma_11_round(costs):
    """Lemma 11 with privacy buckets (generic (ε, δ) steps: the optimal composition's worst
    case): the row carries each stop's cost and the δ the COMP certifies for its prefix; the
    declared δ is their sum, and mechOk refuses one unit less."""
    steps = [StepSpec(Fraction(1, 10), Fraction(1, 10**6))] * 3
    comp = BucketsComposition()
    mech = IterativeMechanism(lambda h, x, rng: 0, stops=[1, 3], steps=steps, costs=costs,
                              rule=PrefixDeltaSum(comp))
    want_costs = costs or ["1/10", "3/10"]
    deltas = _lemma11_reference([1, 3], steps, want_costs, comp)
    assert mech.guarantee.delta == sum(deltas)
    bs, delta, row = _lemma11_row_is(mech, [1, 3], want_costs, deltas)
    assert delta == lean.stopDeltas([lean.StepGroup(*g) for g in row.groups])
    assert mechanisms.theorem_of("lemma11") == "Odp.Mech.lemma11"  # in this build's sources


def test_noisy_gradient_descent_with_buckets_is_a_lemma_11_round():
    comp = BucketsComposition()
    mech = NoisyGradientDescent(n=50, dim=2, epsilon_step="1/10", stops=[2, 4],
                                rule=PrefixDeltaSum(comp))
    steps = [StepSpec(Fraction(1, 10))] * 4
    _lemma11_row_is(mech, [2, 4], ["1/5", "2/5"],
                    _lemma11_reference([2, 4], steps, ["1/5", "2/5"], comp))


@pytest.mark.parametrize("neighbours", ["add-remove", "replace-one"])
def test_dpsgd_is_a_lemma_11_round_whose_target_covers_the_sum(neighbours):
    """DP-SGD (Lemma 11 with RDP as COMP, or its replace-one form): the row carries the costs
    ε^{k_i} and the RDP δ^{k_i} of each prefix; the declared δ is the target, above their sum —
    accepted (δ ≥ Σ), and so is the sum itself; one unit below the sum is refused."""
    mech = DPSGD(LogisticRegressionModel(1), n=3, sampling_rate=1, noise_multiplier=1,
                 epochs=2, delta="1e-3", clip=1, granularity="1/4", neighbours=neighbours)
    inner = RDPComposition()
    comp = inner if neighbours == "add-remove" else ReplaceOneComposition(inner)
    steps = [mech.steps[0]] * mech.stops[-1]
    costs = [c for _, c in as_odp(mech.guarantee).record().classes]
    deltas = _lemma11_reference(mech.stops, steps, costs, comp)
    assert sum(deltas) == mech.lemma11_delta < mech.guarantee.delta == Fraction(1, 1000)
    bs, delta, row = _lemma11_row_is(mech, list(mech.stops), costs, deltas)
    assert delta > lean.stopDeltas([lean.StepGroup(*g) for g in row.groups])


def test_lemma_11_rows_need_increasing_stops_and_no_parameters():
    gs = [lean.StepGroup(10, 2, 3), lean.StepGroup(20, 3, 4)]
    k = lean.kindLemma11()
    assert lean.mechOk(lean.Entry(3, 2, 7), [2, 3], True, k, [], gs)
    assert lean.mechOk(lean.Entry(3, 3, 7), [], False, k, [], gs)  # charged its sup
    assert not lean.mechOk(lean.Entry(3, 3, 7), [], False, k, [], [])  # no stop
    assert not lean.mechOk(lean.Entry(3, 2, 7), [2, 3], True, k, [5], gs)  # a parameter
    swapped = [lean.StepGroup(20, 2, 3), lean.StepGroup(10, 3, 4)]
    assert not lean.mechOk(lean.Entry(3, 2, 7), [2, 3], True, k, [], swapped)
    zero = [lean.StepGroup(0, 2, 3), lean.StepGroup(20, 3, 4)]
    assert not lean.mechOk(lean.Entry(3, 2, 7), [2, 3], True, k, [], zero)
    assert not lean.mechOk(lean.Entry(3, 2, 7), [3, 2], True, k, [], gs)  # class order
    assert not lean.mechOk(lean.Entry(4, 4, 7), [], False, k, [], gs)  # sup not the largest


def test_a_certificate_with_lemma_11_rounds_verifies_everywhere(tmp_path, capsys):
    """A real run with a buckets round (noisy gradient descent, Lemma 11 with privacy buckets)
    and a DP-SGD round: the generated checker accepts it and reports both rounds proved by
    Odp.Mech.lemma11, each resting on Iter.PrefixDP with numbers computed by tested Python code;
    the stand-in odpcheck (NOT a Lean check) parses the rows; a δ edited below the sum is
    refused."""
    import numpy as np

    data = (np.array([[0.5], [-2.0], [3.0]]), np.array([1.0, -1.0, 1.0]))
    acc = odp.Accountant("40", "1e-2", rng=odp.SeededRandom(2))
    gd = NoisyGradientDescent(n=3, dim=1, epsilon_step="1/10", stops=[1, 3],
                              rule=PrefixDeltaSum(BucketsComposition()))
    acc.run(gd, data)
    # one neighbouring relation per accountant: DP-SGD converted to the replace-one neighbours
    # of noisy gradient descent (group privacy)
    sgd = DPSGD(LogisticRegressionModel(1), n=3, sampling_rate=1, noise_multiplier=1,
                epochs=2, delta="1e-3", clip=1, granularity="1/4", neighbours="replace-one")
    acc.run(sgd, data)
    cert = acc.certificate()
    rows = [s.mech for s in parse(cert.text).steps]
    assert [r.name for r in rows] == ["lemma11", "lemma11"]
    assert cert.text.count("\nmech lemma11 ; ") == 2
    result = verify(cert.text, cert.sidecar)
    assert result.ok, result.message
    for r in result.guarantees["rounds"]:
        assert r["status"] == "proved" and r["theorem"] == "Odp.Mech.lemma11"
        assert "tested Python code" in r["checked"] and "hypothesis" in r["checked"]
        assert r["hypotheses"] == list(mechanisms.HYPOTHESES["lemma11"])
        assert r["hypotheses"][0].startswith("numerical bound: Iter.PrefixDP")
    assert any(s.startswith("the hypotheses listed under 'guarantees' below")
               for s in result.trust.not_established)
    lines = result.guarantee_lines()
    assert all(len(line) <= 100 for line in lines)
    flat = " ".join(" ".join(lines).split())
    assert ("rounds 1-2: lemma11 (recorded as dpsgd, noisy_gd), odp's own mechanism: proved by "
            "Odp.Mech.lemma11, assuming - numerical bound: Iter.PrefixDP") in flat
    with OdpCheckProcess(FAKE, timeout=30) as proc:  # NOT a Lean check: the protocol only
        assert proc.check(cert.text).ok
        # the buckets round's δ one unit below Σ_i δ^{k_i} (and the budget rows consistent)
        text = parse(cert.text)
        first = text.steps[0]
        short = first.delta - 1
        forged = cert.text.replace(f"step {first.sup_eps} {first.charged} {first.delta}\n",
                                   f"step {first.sup_eps} {first.charged} {short}\n", 1)
        assert forged != cert.text
        answer = proc.check(forged)
        assert not answer.ok and answer.row == 1 and answer.message.startswith("mech")
    result = verify(forged, cert.sidecar)
    assert not result.ok and result.row == 1


def test_iterative_with_custom_costs_is_declared():
    mech = IterativeMechanism(lambda h, x, rng: 0, stops=[1, 2], steps=StepSpec(Fraction(1, 4)),
                              costs=["1/2", "1"], rule=PrefixDeltaSum())
    assert mechanisms.derive(mech.name, mech.params()) is None
    row = mechanisms.row_for(mech.name, mech.params(), as_odp(mech.guarantee).record().classes)
    assert row.kind == "declared"


@settings(max_examples=12, deadline=None)
@given(small, small, st.integers(200, 20000), st.integers(20, 5000), st.integers(1, 5),
       st.builds(Fraction, st.integers(1, 100), st.integers(1, 100)))
def test_tested_logistic_regression_follows_theorem_17(eps1, eps2, n_train, n_test, dim, lam):
    try:
        mech = TestedLogisticRegression(epsilon1=eps1, epsilon2=eps2, threshold="0.3",
                                        regularization=lam, n_train=n_train, n_test=n_test,
                                        dim=dim)
    except InvalidParameter:
        assume(False)
    bs, delta, row = _agrees(mech, "test_release")
    assert row.params[2:] == (mech.units, mech.units_test, mech.units_train)


def test_the_recorded_key_not_the_name_selects_the_row_and_missing_params():
    laplace = mechanisms.Derived("laplace", (mechanisms.Units(Fraction(1, 10)),))
    marked = {BUILTIN_KEY: "laplace", "epsilon": "1/10"}
    assert mechanisms.derive("laplace[bin 3]", marked) == laplace  # the name is a label
    assert mechanisms.derive("anything", marked) == laplace
    assert mechanisms.derive("laplace", {"epsilon": "1/10"}) is None  # a name claims nothing
    assert mechanisms.derive("laplace", {BUILTIN_KEY: "laplace"}) is None  # no epsilon
    assert mechanisms.derive("laplace", {BUILTIN_KEY: "laplace", "epsilon": 0.1}) is None  # float
    assert mechanisms.derive("x", {BUILTIN_KEY: "my_mechanism", "epsilon": "1"}) is None
    # text version 2's rule (re-deriving such certificates only): the name, a [label] allowed
    assert mechanisms.derive("laplace[bin 3]", {"epsilon": "1/10"}, by_name=True) == laplace
    dp = [("all", Fraction(1))]
    assert mechanisms.row_for("external", {}, dp).kind == "dp"
    assert mechanisms.row_for("external", {}, [("lo", Fraction(0)), ("hi", Fraction(1))]
                              ).kind == "declared"


def test_every_kind_has_its_lean_constant_and_a_distinct_number():
    numbers = [k.number for k in mechanisms.KINDS.values()]
    assert len(set(numbers)) == len(numbers)
    assert mechanisms.KINDS["declared"].number == lean.kindDeclared()
    for kind in mechanisms.KINDS.values():
        # an unknown kind number is refused by mechOk
        assert not lean.mechOk(lean.Entry(0, 0, 0), [], False, max(numbers) + 1, [], [])
        assert kind.theorem is None or kind.theorem.startswith("Odp.Mech.")


# ------------------------------------------------------------------------------ the text rows

@pytest.mark.parametrize("row, message", [
    ("mech nope 1", "known mechanism"),
    ("mech toy", "takes 1 parameters"),
    ("mech toy 1 2", "takes 1 parameters"),
    ("mech svt 1 2", "takes 3 parameters"),
    ("mech toy 1 ; 1 1 1", "natural number"),
    ("mech iter 1 2", "expected 'mech iter"),
    ("mech iter 1 ; 1 1", "threes"),
    ("mech iter ; 1 1 1", "one or more"),
    ("mech dp -1", "natural number"),
    ("mech lemma11", "expected 'mech lemma11 ; <k_i ε δ>"),
    ("mech lemma11 1 ; 1 1 1", "takes 0 parameters"),
    ("mech lemma11 ; 1 1", "threes"),
])
def test_mech_rows_are_parsed_strictly(row, message):
    text = f"D 10\nbudget 10 0\nstep 1 1 0\n{row}\n"
    with pytest.raises(CertificateError, match=message):
        parse(text)


def test_mech_row_placement():
    with pytest.raises(CertificateError, match="must follow its step"):
        parse("D 10\nbudget 10 0\nmech dp\nstep 1 1 0\n")
    with pytest.raises(CertificateError, match="must follow its step"):
        parse("D 10\nbudget 10 0\nstep 1 1 0\nmech dp\nmech dp\n")
    cert = parse("D 10\nbudget 10 0\nstep 3 3 0\nmech iter 1 2 ; 2 1 0 1 1 0\n")
    assert cert.steps[0].mech == mechanisms.MechRow("iter", (1, 2), ((2, 1, 0), (1, 1, 0)))
    assert cert.render().endswith("mech iter 1 2 ; 2 1 0 1 1 0\n")
    cert = parse("D 10\nbudget 10 9\nstep 3 3 7\nmech lemma11 ; 1 2 3 2 3 4\n")
    assert cert.steps[0].mech == mechanisms.MechRow("lemma11", (), ((1, 2, 3), (2, 3, 4)))
    assert cert.render().endswith("mech lemma11 ; 1 2 3 2 3 4\n")


# ------------------------------------------------------------------------------ the forgeries

def _real_run(ledger=None) -> odp.Accountant:
    """A real run: M_toy rounds (ε = 0.2) and DP(0.1) charges."""
    acc = odp.Accountant("2", "1e-6", ledger=ledger, rng=odp.SeededRandom(3))
    for _ in range(3):
        acc.run(ToyMechanism(len, epsilon="0.2"), [1, 2, 3])
        acc.charge(odp.DP("0.1"))
    return acc


def _forge(text: str, kind: str) -> tuple[str, int]:
    """The issue's forgeries, on the certificate text: the first toy round relabelled as free
    (``step 0 0 0``, ``blocks 0 0``), or the first DP(0.1) charge halved with an invented
    two-class ``blocks`` row.  Returns the text and the forged round (1-based)."""
    lines = text.splitlines()
    steps = [i for i, line in enumerate(lines) if line.startswith("step")]
    want = "mech toy 200000" if kind == "toy" else "mech dp"
    n, i = next((n, i) for n, i in enumerate(steps, 1)
                if next(x for x in lines[i + 1:] if x.startswith("mech")) == want)
    if kind == "toy":
        lines[i], lines[i + 1] = "step 0 0 0", "blocks 0 0 ; realized 1"
    else:
        lines[i], lines[i + 1] = "step 100000 50000 0", "blocks 100000 50000 ; realized 1"
    return "\n".join(lines) + "\n", n


@pytest.mark.parametrize("kind", ["toy", "dp"])
def test_the_two_forgeries_fail_the_generated_checker_naming_the_round(kind, tmp_path, capsys):
    cert = _real_run().certificate()
    assert parse(cert.text).steps[0].mech == mechanisms.MechRow("toy", (200000,))
    assert verify(cert.text, cert.sidecar).ok
    forged, n = _forge(cert.text, kind)
    e = parse(forged).steps[n - 1]
    assert lean.blocksOk(lean.Entry(e.sup_eps, e.charged, e.delta), e.blocks, e.realized)
    result = verify(forged, cert.sidecar)
    assert not result.ok and result.row == n and result.rule == "Odp.LedgerCore.mechOk"
    assert f"row {n}:" in result.message
    path = tmp_path / "forged.cert"
    path.write_text(forged)
    Path(str(path) + ".json").write_text(json.dumps(cert.sidecar))
    assert main(["verify", str(path)]) == 1
    assert f"FAIL row {n}:" in capsys.readouterr().out
    with OdpCheckProcess(FAKE, timeout=30) as proc:  # NOT a Lean check: the protocol only
        answer = proc.check(forged)
    assert not answer.ok and answer.row == n and answer.message.startswith("mech")
    # without its mech row the round is declared, and the sidecar names the mechanism
    stripped = forged.replace("\nmech toy 200000\n" if kind == "toy" else "\nmech dp\n", "\n", 1)
    result = verify(stripped, cert.sidecar)
    assert not result.ok and result.row == n and result.rule == "format"


def _relabel_free_in_the_ledger(path: Path) -> None:
    """A forger without keys rewrites the ledger: the first toy round declares (values: 0,
    ⊥: 0) and is charged 0, the chain recomputed; the recorded mechanism stays M_toy."""
    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT kind, round_id, mechanism FROM events ORDER BY seq").fetchall()
    conn.close()
    target = next(r[1] for r in rows if r[0] == "reserve" and r[2] == "toy")

    def relabel(stored: list) -> None:
        if stored[2] == target and stored[1] == "reserve":
            g = json.loads(stored[5])
            g["costs"] = [[label, "0"] for label, _ in g["costs"]]
            stored[5], stored[6] = json.dumps(g, separators=(",", ":")), "0"
        elif stored[2] == target:
            stored[10] = "0"

    rewrite_events(path, relabel)


def test_a_consistent_rewrite_of_the_ledger_still_fails_at_the_mech_row(tmp_path):
    """The relabelling done in the ledger itself, chain recomputed (no keys needed): the
    certificate is self-consistent, and its toy round fails mechOk."""
    path = tmp_path / "run.db"
    _real_run(path).close()
    g_before = sqlite3.connect(path).execute(
        "SELECT guarantee FROM events WHERE mechanism = 'toy' LIMIT 1").fetchone()[0]
    _relabel_free_in_the_ledger(path)
    g_after = sqlite3.connect(path).execute(
        "SELECT guarantee FROM events WHERE mechanism = 'toy' LIMIT 1").fetchone()[0]
    assert g_before != g_after
    from odp.ledger import SQLiteLedger

    with SQLiteLedger(path, readonly=True) as ledger:
        cert = certificate_of(ledger)
    result = verify(cert.text, cert.sidecar)
    assert not result.ok and result.row == 1 and result.rule == "Odp.LedgerCore.mechOk"


# ------------------------------------------------------------------------------ the report

def test_verify_reports_per_round_proved_or_declared(tmp_path, capsys, monkeypatch):
    acc = _real_run()
    g = odp.ODP(lambda r: r, {"lo": "0.05", "hi": "0.2"})
    acc.charge(g, "lo")  # a user's own ODP mechanism
    path = tmp_path / "run.cert"
    acc.certificate().write(path)
    # this build's Lean sources: whatever theorems they have (none are assumed)
    assert main(["verify", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    g_report = report["guarantees"]
    assert [r["mechanism"] for r in g_report["rounds"]] == ["toy", "dp"] * 3 + ["declared"]
    for r in g_report["rounds"]:
        theorem = mechanisms.theorem_of(r["mechanism"])
        assert r["theorem"] == theorem and r["status"] == ("proved" if theorem else "declared")
    assert g_report["proved"] + g_report["declared"] == 7
    assert any(s.startswith("the declared guarantees of round(s) 2, 4, 6, 7 (a user's own")
               for s in report["generated_checker"]["not_established"])
    # with the theorems of the table in the Lean sources (as after the merge of Odp/Mech)
    monkeypatch.setattr(lean, "LEAN_THEOREMS", {
        k.theorem: "Odp/Mech/X.lean" for k in mechanisms.KINDS.values() if k.theorem})
    monkeypatch.setitem(lean.LEAN_SOURCES, "Odp/Mech/X.lean", "0" * 64)
    acc2 = _real_run()
    acc2.charge(g, "lo")
    path2 = tmp_path / "run2.cert"
    acc2.certificate().write(path2)
    assert main(["verify", str(path2), "--json"]) == 0
    g_report = json.loads(capsys.readouterr().out)["guarantees"]
    assert g_report["proved"] == 3 and g_report["declared"] == 4
    assert [r["theorem"] for r in g_report["rounds"][:2]] == ["Odp.Mech.toy_odp", None]
    assert main(["verify", str(path2)]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= 100 for line in out.splitlines())
    flat = " ".join(out.split())
    assert "guarantees: 3 of 7 round(s) proved in Lean, 4 declared" in flat
    assert ("rounds 1, 3, 5: toy, odp's own mechanism: proved by Odp.Mech.toy_odp, assuming "
            "- law: clampedLaplace") in flat
    assert "- the guarantees of 3 of the 7 rounds are proved in Lean from the hypotheses" in flat
    side = json.loads(Path(str(path2) + ".json").read_text())
    assert {"Odp.LedgerCore.mechOk", "Odp.Mech.toy_odp"} <= {
        c["name"] for c in side["rounds"][0]["rules"]}


def test_text_version_1_certificates_have_declared_rounds():
    """A certificate written without mech rows (text v1, from before they existed) still
    verifies; every round is declared.  A text-v2 sidecar requires the rows."""
    from odp.certs.export import build_certificate

    acc = _real_run()
    old = build_certificate(acc.budget, acc.history, "run", text_version=1)
    assert "mech" not in old.text and "text_version" not in old.sidecar
    result = verify(old.text, old.sidecar)
    assert result.ok and result.guarantees["proved"] == 0
    assert {r["mechanism"] for r in result.guarantees["rounds"]} == {"declared"}
    new = build_certificate(acc.budget, acc.history, "run")
    assert new.sidecar["text_version"] == 3 and new.text.count("\nmech ") == 6


def test_a_mech_row_not_derived_from_the_recorded_parameters_is_caught():
    cert = _real_run().certificate()
    # a consistent edit of the first round: toy with ε = 0.1, classes (0.1, 0) — not its params
    forged = cert.text.replace("step 200000 0 0\nblocks 200000 0 ; realized 1\nmech toy 200000",
                               "step 100000 0 0\nblocks 100000 0 ; realized 1\nmech toy 100000", 1)
    assert forged != cert.text
    result = verify(forged, cert.sidecar)
    assert not result.ok and result.rule == "sidecar" and result.row == 1


# ------------------------------------------------------------------------------ run time

def test_run_time_check_applies_the_mech_row_when_given_the_recorded_mechanism():
    from odp.certs.enforce import generated_check

    f = Fraction
    toy = {"epsilon": "1/5", BUILTIN_KEY: "toy"}  # recorded as odp's own M_toy
    assert generated_check(f(1), f(0), f(1, 5), f(0), f(0), [f(1, 5), f(0)], 1,
                           mechanism="toy", params=toy)
    assert not generated_check(f(1), f(0), f(0), f(0), f(0), [f(0), f(0)], 1,
                               mechanism="toy", params=toy)  # relabelled free
    assert generated_check(f(1), f(0), f(0), f(0), f(0), [f(0), f(0)], 1)  # no mechanism given
    assert not generated_check(f(1), f(0), f(1, 10), f(1, 20), f(0), [f(1, 10), f(1, 20)], 1,
                               mechanism="laplace",
                               params={"epsilon": "1/10", BUILTIN_KEY: "laplace"})
    assert generated_check(f(1), f(0), f(1, 10), f(1, 20), f(0), [f(1, 10), f(1, 20)], 1,
                           mechanism="laplace", params={"epsilon": "1/10"})  # a label: declared
    assert generated_check(f(1), f(0), f(1, 10), f(1, 20), f(0), [f(1, 10), f(1, 20)], 1,
                           mechanism="external", params={})  # declared: arithmetic only


# ------------------------------------------------------------------------------ the demo

def _demo_guarantees(tmp_path: Path, capsys, name: str) -> dict:
    ledger = tmp_path / f"{name}.db"
    assert main(["demo", "--ledger", str(ledger), "--seed", "4", "--json"]) == 0
    cert = tmp_path / f"{name}.cert"
    assert main(["certify", str(ledger), "-o", str(cert)]) == 0
    capsys.readouterr()
    assert main(["verify", str(cert), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["generated_checker"]["ok"]
    return report["guarantees"]


def test_demo_rounds_are_all_bound_to_built_in_mechanisms(tmp_path, capsys, monkeypatch):
    """``odp demo`` then ``odp certify`` and ``odp verify --json``: every round's mech row
    names a built-in mechanism whose costs mechOk checked (the DP-SGD round: Lemma 11 with RDP
    as COMP); a round is proved exactly when its theorem is in this build's Lean sources.  With
    the theorems of the table present (as after the merge of Odp/Mech, mech-ptr included) EVERY
    round is proved."""
    g = _demo_guarantees(tmp_path, capsys, "now")
    kinds = [r["mechanism"] for r in g["rounds"]]
    names = [r["name"] for r in g["rounds"]]
    assert {"laplace", "svt", "iqr", "median", "iter", "test_release", "lemma11"} == set(kinds)
    assert kinds[names.index("dpsgd")] == "lemma11"
    assert kinds[names.index("noisy_gd")] == "iter"
    for r in g["rounds"]:
        theorem = mechanisms.theorem_of(r["mechanism"])
        assert r["theorem"] == theorem and r["status"] == ("proved" if theorem else "declared")
    monkeypatch.setattr(lean, "LEAN_THEOREMS", {
        k.theorem: "Odp/Mech/X.lean" for k in mechanisms.KINDS.values() if k.theorem})
    monkeypatch.setitem(lean.LEAN_SOURCES, "Odp/Mech/X.lean", "0" * 64)
    g = _demo_guarantees(tmp_path, capsys, "merged")
    assert [r["mechanism"] for r in g["rounds"]] == kinds
    unproved = {r["mechanism"] for r in g["rounds"] if r["status"] != "proved"}
    assert unproved == set() and g["declared"] == 0 and g["proved"] == len(kinds)
    for r in g["rounds"]:
        assert r["theorem"] == mechanisms.KINDS[r["mechanism"]].theorem


# ----------------------------------------------------------- the capstone (Odp/Certs/Link.lean)

def test_the_linked_kinds_are_the_disjuncts_of_builtin_request():
    """``mechanisms.LINKED`` is read off nothing by hand: it must be exactly the kinds whose
    ``…Builtin`` predicates make up ``BuiltinRequest`` in Odp/Certs/Link.lean (CamelCase →
    snake_case), each a kind of the table, and the capstone must be a theorem of this build."""
    import re

    root = Path(__file__).resolve().parents[1]
    text = (root / "Odp" / "Certs" / "Link.lean").read_text(encoding="utf-8")
    body = re.search(r"def BuiltinRequest[^\n]*:=\n(.*?)\n\n", text, re.S)
    assert body is not None
    names = re.findall(r"(\w+)Builtin Nbr D r", body.group(1))
    kinds = {re.sub(r"(?<!^)([A-Z])", r"_\1", n).lower() for n in names}
    assert kinds == mechanisms.LINKED
    assert mechanisms.LINKED <= set(mechanisms.KINDS)
    assert {"declared", "erm", "iter_costs"} == set(mechanisms.KINDS) - mechanisms.LINKED
    assert lean.LEAN_THEOREMS.get(mechanisms.CAPSTONE) == "Odp/Certs/Link.lean"


def test_verify_cites_the_capstone_only_when_every_round_is_linked(tmp_path):
    acc = _real_run()  # M_toy rounds and DP charges: linked kinds
    cert = acc.certificate()
    result = verify(cert.text, cert.sidecar)
    assert result.ok, result.message
    capstone = [s for s in result.trust.established if s.startswith(f"by {mechanisms.CAPSTONE}")]
    assert len(capstone) == 1 and "(ε_t, δ_t)-DP" in capstone[0]
    assert any(s.startswith("the declared guarantees of round(s) 2, 4, 6 (a user's own")
               for s in result.trust.not_established)  # the DP charges stay hypotheses
    acc.charge(odp.ODP(lambda r: r, {"lo": "0.05", "hi": "0.2"}), "lo")  # a declared round
    cert = acc.certificate()
    result = verify(cert.text, cert.sidecar)
    assert result.ok, result.message
    assert not any(mechanisms.CAPSTONE in s for s in result.trust.established)
