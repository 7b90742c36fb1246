"""The in-memory charge path (one record per charge, (ε_r, δ_r) kept instead of recomputed,
integer units for the generated-rule check) gives exactly the state of the two-step
reserve + settle path, and the certificate units are the same numbers as before."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import odp
from odp.certs.enforce import generated_check
from odp.certs.format import common_denominator, in_units, to_units
from odp.errors import BudgetExceeded, CertificateError
from odp.guarantees import ODP

fractions = st.fractions(min_value=0, max_value=3, max_denominator=10**6)


@settings(max_examples=200, deadline=None)
@given(st.lists(fractions, min_size=1, max_size=8))
def test_to_units_is_common_denominator_and_in_units(values):
    d, scaled = to_units(values)
    assert d == common_denominator(values)
    assert scaled == [in_units(v, d) for v in values]
    assert all(Fraction(n, d) == v for n, v in zip(scaled, values))


def test_to_units_refuses_negative_amounts_like_in_units():
    with pytest.raises(CertificateError):
        to_units([Fraction(1, 3), Fraction(-1, 7)])
    with pytest.raises(CertificateError):
        in_units(Fraction(-1, 7), 21)
    with pytest.raises(CertificateError):
        in_units(Fraction(1, 7), 20)  # not a whole number of units 1/20
    assert not generated_check(Fraction(1), Fraction(0), Fraction(1, 3), Fraction(-1, 3),
                               Fraction(0))


costs = st.sampled_from(["0", "0.05", "1/3", "0.25", "1/7"])
ops = st.lists(st.tuples(st.sampled_from(["dp", "odp", "two-step"]), costs,
                         st.sampled_from(["0", "1e-7"]), st.sampled_from(["hi", "lo"])),
               max_size=25)


def run(acc, script):
    out = []
    for kind, eps, delta, cls in script:
        g = ODP(lambda r: r, {"hi": eps, "lo": 0}, delta) if kind != "dp" else odp.DP(eps, delta)
        try:
            if kind == "two-step":  # reserve, then settle: the general path
                with acc.reserve(g) as res:
                    out.append(res.settle(cls).charged)
            else:
                out.append(acc.charge(g, None if kind == "dp" else cls).charged)
        except BudgetExceeded:
            out.append("refused")
    return out


@settings(max_examples=80, deadline=None)
@given(ops)
def test_one_step_charges_keep_the_same_books_as_reserve_and_settle(script):
    one = odp.Accountant(epsilon="1.5", delta="3e-7")
    two_step = [("two-step", e, d, c) if k == "odp" else (k, e, d, c) for k, e, d, c in script]
    two = odp.Accountant(epsilon="1.5", delta="3e-7")
    assert run(one, script) == run(two, two_step)
    assert one.remaining == two.remaining and one.spent == two.spent
    state = one.ledger.snapshot()
    assert state.eps_held == sum((r.epsilon_held for r in state.rounds), Fraction(0))
    assert state.delta_held == sum((r.delta for r in state.rounds), Fraction(0))
    for rec in state.rounds:  # every transition replays under the generated rules
        eps_r, delta_r = state.state_before(rec.round_id)
        assert eps_r >= rec.sup_epsilon and delta_r >= rec.delta
    cert = one.certificate()
    assert cert is not None


def test_a_failing_check_on_the_one_step_path_charges_the_sup_and_raises():
    acc = odp.Accountant(epsilon=1)
    acc._check = lambda *args, **kwargs: False  # a checker that disagrees with every transition
    toy = ODP(lambda r: r, {"hi": "0.3", "lo": "0.1"}, 0)
    with pytest.raises(CertificateError, match="enforcement-mismatch"):
        acc.charge(toy, "lo")
    assert acc.last_round.charged == Fraction(3, 10)
    assert acc.last_round.reason == "enforcement-mismatch"
    assert acc.remaining.epsilon == Fraction(7, 10)
