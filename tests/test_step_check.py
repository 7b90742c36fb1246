"""The one generated step check (``odp._lean_rules.check_step``) and its callers."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from odp import _lean_rules as lean
from odp.certs.enforce import generated_check

nat = st.integers(0, 40)


@settings(max_examples=300, deadline=None)
@given(nat, nat, nat, nat, nat, st.one_of(st.none(), st.lists(nat, min_size=1, max_size=4)),
       nat, st.one_of(st.none(), st.lists(nat, max_size=4)))
def test_check_step_is_the_composition_of_the_generated_rules(eps, dlt, sup, charged, delta,
                                                              blocks, k, deltas):
    s, e = lean.State(eps, dlt), lean.Entry(sup, charged, delta)
    after, rule = lean.check_step(s, e, blocks=blocks,
                                  realized=k if blocks is not None else None, deltas=deltas)
    ok = ((blocks is None or lean.blocksOk(e, blocks, k))
          and (deltas is None or lean.deltasOk(e, deltas))
          and lean.refundJustified(e, blocks is not None) and lean.admits(s, e))
    assert (after is not None) == ok
    if ok:
        assert after == lean.update(s, e) and rule is None
    else:
        assert rule in lean.STEP_RULES


def test_check_step_names_the_first_rule_that_fails():
    s = lean.State(10, 5)
    assert lean.check_step(s, lean.Entry(4, 2, 1), blocks=[4, 2], realized=1) == (lean.State(8, 4), None)
    assert lean.check_step(s, lean.Entry(4, 2, 1), blocks=[4, 3], realized=1) == (None, "blocksOk")
    assert lean.check_step(s, lean.Entry(4, 2, 1), blocks=[4, 2]) == (None, "blocksOk")
    assert lean.check_step(s, lean.Entry(4, 4, 1), deltas=[1, 1]) == (None, "deltasOk")
    assert lean.check_step(s, lean.Entry(4, 2, 1)) == (None, "refundJustified")
    assert lean.check_step(s, lean.Entry(11, 11, 1)) == (None, "admits")
    assert lean.check_step(s, lean.Entry(4, 4, 6)) == (None, "admits")


def test_run_time_enforcement_goes_through_the_step_check():
    f = Fraction
    assert generated_check(f(1), f(1, 10), f(1, 2), f(1, 4), f(0), [f(1, 2), f(1, 4)], 1)
    assert not generated_check(f(1), f(1, 10), f(1, 2), f(1, 4), f(0), [f(1, 2), f(1, 3)], 1)
    assert not generated_check(f(1), f(1, 10), f(1, 2), f(1, 4), f(0))  # refund, no class
    assert not generated_check(f(1, 4), f(0), f(1, 2), f(1, 2), f(0))  # over budget
    assert not generated_check(f(-1), f(0), f(0), f(0), f(0))  # not a natural number of units


kinds = st.sampled_from([lean.kindDeclared(), lean.kindDp(), lean.kindToy(), lean.kindLaplace(),
                         lean.kindPtr(), lean.kindSvt(), lean.kindIter(), 99])
groups = st.lists(st.builds(lean.StepGroup, st.integers(0, 4), nat, nat), max_size=2)


@settings(max_examples=300, deadline=None)
@given(nat, nat, nat, nat, nat, st.one_of(st.none(), st.lists(nat, min_size=1, max_size=3)),
       nat, kinds, st.lists(nat, max_size=3), groups)
def test_check_step_applies_mech_ok_after_the_lemma_rows(eps, dlt, sup, charged, delta, blocks,
                                                         k, kind, params, gs):
    """``check_step`` with a ``mech`` row is ``stepRowsOk`` (blocks, deltas, mech, refund) and
    ``admits``, in that order, as ``Odp.LedgerCore.stepRowsOk`` composes them."""
    s, e = lean.State(eps, dlt), lean.Entry(sup, charged, delta)
    realized = k if blocks is not None else None
    after, rule = lean.check_step(s, e, blocks=blocks, realized=realized,
                                  mech=(kind, params, gs))
    mech_ok = lean.mechOk(e, blocks or [], blocks is not None, kind, params, gs)
    rows = [("blocksOk", blocks is None or lean.blocksOk(e, blocks, k)), ("mechOk", mech_ok),
            ("refundJustified", lean.refundJustified(e, blocks is not None)),
            ("admits", lean.admits(s, e))]
    first = next((name for name, ok in rows if not ok), None)
    assert rule == first and (after is None) == (first is not None)
    if kind == 99:
        assert not mech_ok  # an unknown mechanism is refused
