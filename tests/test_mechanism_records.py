"""One record per built-in mechanism kind (``odp.certs.mechanisms.KINDS``): every kind has every
field, every table and message is read from the records, and each record's cost function is the
one the generated checker (``mechOk``, from ``Odp/LedgerCore.lean``) enforces."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import odp.mechanisms.dpsgd  # noqa: F401  (registers DP-SGD's built-in key)
import odp.mechanisms.erm  # noqa: F401  (registers the ERM keys)
from odp import _lean_rules as lean
from odp.certs import mechanisms
from odp.certs.format import parse
from odp.certs.mechanisms import KINDS, Costs, MechRow
from odp.mechanisms import builtin

ROOT = Path(__file__).resolve().parents[1]


def test_every_kind_has_every_field():
    numbers = set()
    for name, kind in KINDS.items():
        assert kind.name == name and re.fullmatch(r"[a-z_0-9]+", name)
        assert kind.lean_kind in lean.DEFINITIONS and kind.number not in numbers
        numbers.add(kind.number)
        assert kind.checked and kind.hypotheses and all(kind.hypotheses)
        assert kind.params is None or all(p.key for p in kind.params)
        if name in ("declared", "dp"):  # no parameters, never recorded, no cost function
            assert (kind.params, kind.groups, kind.recorded, kind.cost) == ((), False, (), None)
            assert kind.theorem is None and kind.note
        else:
            assert kind.recorded and kind.cost is not None
        assert kind.theorem is None or kind.theorem.startswith("Odp.Mech.")
        assert not kind.linked or kind.theorem is not None or name == "dp"


def test_the_records_agree_with_the_lean_checkers_row_table():
    """Name, kind constant, number of parameters and step groups: ``mechKind`` of OdpCheck.lean
    (the executable checker's parser) says the same for every kind, and nothing more."""
    text = (ROOT / "OdpCheck.lean").read_text(encoding="utf-8")
    rows = re.findall(r'name == "(\w+)"\.toList then some \((\w+), (some (\d+)|none), (\w+)\)',
                      text)
    table = {n: (k, None if a == "none" else int(d), g == "true") for n, k, a, d, g in rows}
    assert table == {k.name: (k.lean_kind, k.arity, k.groups) for k in KINDS.values()}


def test_every_table_is_read_from_the_records():
    assert mechanisms.LINKED == {k.name for k in KINDS.values() if k.linked}
    assert mechanisms.HYPOTHESES == {k.name: k.hypotheses for k in KINDS.values()}
    assert {key: [k.name for k in kinds] for key, kinds in mechanisms.RECORDED.items()} == {
        key: [k.name for k in KINDS.values() if key in k.recorded]
        for k in KINDS.values() for key in k.recorded}
    # every key the accountant records for odp's own mechanisms reads a kind, and so does the
    # key of odp.dpsgd.Accounting (a training loop odp accounts but does not run); the other
    # keys are names that certificate text version 2 read a kind from
    from odp.dpsgd.accounting import LOOP_KEY

    registered = {e.key for e in builtin._REGISTRY.values() if e.key is not None}
    assert registered | {LOOP_KEY} <= set(mechanisms.RECORDED)
    assert set(mechanisms.RECORDED) - registered == {"iterative", "ptr", LOOP_KEY}


def test_messages_and_verify_lines_are_read_from_the_record(monkeypatch):
    """``expected_text`` is the record's cost function, and ``odp verify``'s hypotheses, notes
    and checks are the record's fields: changing the record changes them, and nothing else has
    to change (as when a hypothesis gains a Lean proof)."""
    row = MechRow("svt", (2, 3, 4))
    assert mechanisms.expected_text(row) == " (the mechanism's: blocks [3, 5, 7], delta 0)"
    svt = KINDS["svt"]
    changed = dataclasses.replace(svt, cost=lambda r: Costs((42, 1), 7), note="why",
                                  hypotheses=("sensitivity: only this",), checked="that")
    monkeypatch.setitem(KINDS, "svt", changed)
    assert mechanisms.expected_text(row) == " (the mechanism's: blocks [42, 1], delta 7)"
    monkeypatch.setattr(lean, "LEAN_THEOREMS", {})
    entry = mechanisms.guarantees([row])["rounds"][0]
    assert entry["hypotheses"] == ["sensitivity: only this"] and entry["checked"] == "that"
    assert entry["note"] == "why" and entry["status"] == "declared"


def test_expected_text_shows_each_kinds_cost_function():
    for kind in KINDS.values():
        params = (1,) * (1 if kind.arity is None else kind.arity)
        row = MechRow(kind.name, params, ((1, 2, 3),) if kind.groups else None)
        costs = kind.expected(row)
        assert mechanisms.expected_text(row) == ("" if costs is None else costs.text())
        assert (costs is None) == (kind.cost is None)
    assert mechanisms.expected_text(MechRow("laplace", (1, 2))) == ""  # not its shape
    assert mechanisms.expected_text(MechRow("svt", (0, 1, 2))) == ""  # c = 0: no classes


nat = st.integers(0, 40)


def _row(data, kind):
    """A row of ``kind`` whose cost function gives whole units (so ``mechOk`` can take it)."""
    draw = data.draw
    if kind.name == "svt":
        c = draw(st.integers(1, 6))
        return MechRow("svt", (c, draw(nat), c * draw(nat)))
    if kind.name == "test_release":
        u = draw(st.integers(1, 5))
        return MechRow("test_release", (draw(nat), u * draw(nat), u, draw(nat), draw(nat)))
    if kind.name == "lemma11":
        stops = sorted(draw(st.sets(st.integers(1, 30), min_size=1, max_size=4)))
        return MechRow("lemma11", (), tuple((k, draw(nat), draw(nat)) for k in stops))
    if kind.groups:
        groups = tuple((draw(st.integers(1, 5)), draw(nat), draw(nat))
                       for _ in range(draw(st.integers(1, 3))))
        total = sum(n for n, _, _ in groups)
        stops = sorted(draw(st.sets(st.integers(1, total), max_size=3)) | {total})
        return MechRow(kind.name, tuple(stops), groups)
    assert kind.arity is not None
    return MechRow(kind.name, tuple(draw(nat) for _ in range(kind.arity)))


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_each_cost_function_is_what_mech_ok_enforces(data):
    """For every kind with a cost function: ``mechOk`` accepts the classes and δ it gives (each
    class realised, and the sup charged without a blocks row), and refuses a class cost or δ
    moved by one unit (a δ floor: one unit below; a declared δ: any)."""
    for kind in KINDS.values():
        if kind.cost is None:
            continue
        row = _row(data, kind)
        costs = kind.expected(row)
        assert costs is not None and all(b == int(b) for b in costs.blocks), row
        bs = [int(b) for b in costs.blocks]
        delta = 7 if costs.delta is None else costs.delta
        number, ps, gs = mechanisms.lean_args(row)
        sup = max(bs)
        assert parse(f"D 1\nbudget 0 0\nstep 0 0 0\n{row.render()}\n").steps[0].mech == row
        for k, cost in enumerate(bs):
            assert lean.mechOk(lean.Entry(sup, cost, delta), bs, True, number, ps, gs), (row, k)
        assert lean.mechOk(lean.Entry(sup, sup, delta), [], False, number, ps, gs), row
        for k in range(len(bs)):
            for step in (1, -1):
                bad = list(bs)
                bad[k] += step
                if bad[k] >= 0:
                    assert not lean.mechOk(lean.Entry(max(bad), bad[k], delta), bad, True,
                                           number, ps, gs), (row, bad)
        moved = [delta + 1] + ([delta - 1] if delta > 0 else [])
        for other in moved:
            accepted = lean.mechOk(lean.Entry(sup, sup, other), bs, True, number, ps, gs)
            if costs.delta is None:
                assert accepted, row
            elif costs.delta_floor:
                assert accepted == (other > delta), (row, other)
            else:
                assert not accepted, (row, other)


@pytest.mark.parametrize("name", ["laplace", "toy"])
def test_a_proved_noise_law_is_one_edit_of_the_record(name, monkeypatch):
    """The grid Laplace and M_toy are proved about the clamped discrete Laplace law written out
    in Lean (no ``LapNoise``): their records name that law and no noise hypothesis.  A record's
    ``hypotheses`` field is the one thing such a change edits: ``odp verify`` lists the rest."""
    kind = KINDS[name]
    assert not any("LapNoise" in h for h in kind.hypotheses)
    assert any(h.startswith("law: clampedLaplace") for h in kind.hypotheses)
    rest = tuple(h for h in kind.hypotheses if not h.startswith("law: clampedLaplace"))
    assert rest and len(rest) == len(kind.hypotheses) - 1
    monkeypatch.setitem(KINDS, name, dataclasses.replace(kind, hypotheses=rest))
    entry = mechanisms.guarantees([MechRow(name, (5,))])["rounds"][0]
    assert entry["hypotheses"] == list(rest)