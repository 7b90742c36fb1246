"""The durable charge path's shortcuts give exactly what the plain definitions give:
the one-loop row encoding and its caches against :func:`encode_value` byte for byte, the
remembered JSON texts against ``dumps``, the records built without per-field ``setattr``
against the dataclass constructors, and the stored values against the old conversion."""

from __future__ import annotations

import struct
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import odp
from odp.guarantees import GuaranteeRecord
from odp.ledger import SQLiteLedger
from odp.ledger.chain import EventRow, encode_value, encode_values, row_hash
from odp.ledger.records import (
    RoundRecord,
    RoundRequest,
    dumps,
    guarantee_text,
    label_text,
    params_text,
    request_texts,
)


def reference(values):
    return b"".join(encode_value(v) for v in values)


class Text(str):
    pass


class Number(int):
    pass


class Amount(Fraction):
    pass


scalars = st.one_of(
    st.none(), st.integers(), st.text(), st.text(alphabet="é€😀a\"\\{}"),
    st.fractions(), st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([Text("x"), Number(3), Amount(1, 3), Text("é")]))
bad = st.sampled_from([True, False, float("nan"), float("inf"), -float("inf"), 1j, [1],
                       b"bytes", {"a": 1}])


@settings(max_examples=400, deadline=None)
@given(st.lists(scalars, max_size=16))
def test_encode_values_is_the_reference_encoding_byte_for_byte(values):
    assert encode_values(values) == reference(values)
    assert encode_values(values) == reference(values)  # again: now from the caches


@settings(max_examples=100, deadline=None)
@given(st.lists(scalars, max_size=6), bad, st.lists(scalars, max_size=6))
def test_encode_values_refuses_what_encode_value_refuses(before, value, after):
    with pytest.raises(TypeError):
        encode_value(value)
    with pytest.raises(TypeError):
        encode_values([*before, value, *after])


def test_encode_values_caches_never_change_an_encoding():
    """Equal strings share an encoding; a Fraction is remembered by identity only, so another
    object that reuses a freed id gets its own encoding; lone surrogates still fail."""
    for i in range(2000):  # more than the caches hold: they are cleared and refilled
        value = Fraction(i, 7)
        assert encode_values([value, str(i), "é" * (i % 3)]) == reference(
            [value, str(i), "é" * (i % 3)])
    long = "x" * 10_000
    assert encode_values([long, long]) == reference([long, long])
    with pytest.raises(UnicodeEncodeError):
        encode_values(["\ud800"])
    assert encode_values([Fraction(2, 20)]) == b"q4:1/10"
    assert encode_values([-3, "é", 1.5]) == (b"i2:-3" b"s2:\xc3\xa9" b"f16:"
                                              + struct.pack(">d", 1.5).hex().encode())


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1), st.text(), st.fractions(min_value=0), st.floats(
    allow_nan=False, allow_infinity=False), st.one_of(st.none(), st.text()))
def test_rows_hash_as_the_reference_encoding(seq, text, amount, created, owner):
    for row in (EventRow(seq, "reserve", text, text, "{}", text, amount, amount, 0, None, None,
                         None, owner, created),
                EventRow(seq, "settle", text, None, None, None, None, None, None, '"all"',
                         amount, "released", owner, created)):
        assert row.encode() == reference(row)
        assert row.stored_values() == [str(v) if isinstance(v, Fraction) else v
                                       for v in row.values()]
    assert row_hash("00" * 32, row) == row_hash("00" * 32, row)


def test_stored_values_convert_fraction_subclasses_too():
    row = EventRow(1, "settle", "r", None, None, None, None, None, None, "null", Amount(1, 3),
                   "released", None, 1.0)
    assert row.stored_values()[10] == "1/3"


records = st.builds(
    GuaranteeRecord,
    st.lists(st.tuples(st.one_of(st.text(max_size=5), st.integers(-5, 5)),
                       st.fractions(min_value=0, max_denominator=1000)),
             min_size=1, max_size=4, unique_by=lambda p: (type(p[0]), p[0])).map(tuple),
    st.fractions(min_value=0, max_value=Fraction(1, 2), max_denominator=10**6),
    st.one_of(st.none(), st.just((("a", Fraction(1, 10**6)),))))


@settings(max_examples=200, deadline=None)
@given(records, st.one_of(st.none(), st.text(max_size=5), st.integers()))
def test_remembered_texts_are_the_canonical_json(record, label):
    for _ in range(2):  # the second call reads the cache
        assert guarantee_text(record) == dumps(record.to_json())
        assert label_text(label) == dumps(label)
    assert params_text({}) == dumps({}) == "{}"
    assert params_text({"b": 1, "a": [True, None]}) == dumps({"b": 1, "a": [True, None]})


def test_a_guarantee_text_follows_a_changed_part_and_mutable_parts_are_not_remembered():
    record = GuaranteeRecord((("a", Fraction(1, 3)),), Fraction(0))
    assert guarantee_text(record) == dumps(record.to_json())
    object.__setattr__(record, "classes", (("a", Fraction(1, 2)),))  # forced past frozen
    assert '"1/2"' in guarantee_text(record)
    pairs = [["a", Fraction(1, 3)]]  # lists: the record's text could change under it
    loose = GuaranteeRecord(pairs, Fraction(0))  # type: ignore[arg-type]
    assert guarantee_text(loose) == dumps(loose.to_json())
    pairs[0][1] = Fraction(1, 5)
    assert guarantee_text(loose) == dumps(loose.to_json()) and '"1/5"' in guarantee_text(loose)


def test_dumps_is_json_dumps_with_sorted_keys_and_no_spaces():
    import json

    for obj in ({"b": [1, 2.5, None], "a": "é\n"}, [], "x", 3, None, {"k": {"z": 1, "y": 2}}):
        assert dumps(obj) == json.dumps(obj, sort_keys=True, separators=(",", ":"))
    with pytest.raises(TypeError):
        dumps({"x": Fraction(1, 3)})


def test_trusted_constructors_build_the_same_records():
    g = GuaranteeRecord((("all", Fraction(1, 3)),), Fraction(0))
    values = (1, "r", "m", {}, g, Fraction(1, 3), Fraction(0), False, 1.5, "settled", "all",
              Fraction(1, 3), "released", 2.5, 4, {"owner": "x"})
    fast, plain = RoundRecord._of_fields(values), RoundRecord(*values)
    assert fast == plain and repr(fast) == repr(plain) and fast.to_json() == plain.to_json()
    with pytest.raises(AttributeError):  # still frozen
        fast.index = 2  # type: ignore[misc]
    req = ("r", "m", {"a": 1}, g, Fraction(1, 3), Fraction(0), True)
    assert RoundRequest._of_fields(req) == RoundRequest(*req)
    with pytest.raises(ValueError):  # every field, no fewer
        RoundRecord._of_fields(values[:-1])
    assert request_texts(RoundRequest(*req)) == ('{"a":1}', dumps(g.to_json()))


def test_a_durable_run_verifies_from_disk_after_the_fast_path(tmp_path):
    """Rows written through the fast path re-verify from the file by the plain definitions."""
    path = tmp_path / "l.db"
    acc = odp.Accountant(ledger=SQLiteLedger(path, odp.Budget(1, "1e-6")))
    g = odp.ODP(lambda r: r, {"é": "1/3", 7: "0.001"}, "1e-9")
    for release in ("é", 7, 7):
        acc.charge(g, release)
    acc.charge(odp.DP("1/1000"))
    acc.close()
    ledger = SQLiteLedger(path, readonly=True)
    events = ledger.events()
    prev = ledger.genesis.hash
    for row, digest in events:
        import hashlib

        assert digest == hashlib.sha256(b"odp-ledger-row-v1\0" + bytes.fromhex(prev)
                                        + reference(row)).hexdigest()
        prev = digest
    assert len(events) == 8 and ledger.spent.epsilon == Fraction(1, 3) + Fraction(2, 1000) \
        + Fraction(1, 1000)
    ledger.close()
