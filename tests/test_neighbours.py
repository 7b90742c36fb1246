"""One neighbouring relation per accountant (odp.neighbours): the typed value; the relation
recorded in the ledger (SQLite and PostgreSQL: metadata and genesis hash) and kept on reopen; a
round of another relation refused in every path before any noise is drawn, nothing recorded;
certificates that carry the relation, and fail when it is forged; ledgers and certificates made
before odp recorded it keep working (replace-one)."""

from __future__ import annotations

import json
import sqlite3
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import odp
from odp.certs import verify
from odp.cli import main as cli_main
from odp.dpsgd import Accounting
from odp.errors import InvalidParameter, LedgerCorrupted, LedgerError, NeighboursMismatch
from odp.ledger import Lane, SQLiteLedger
from odp.ledger.chain import Genesis
from odp.mechanisms import (DPSGD, LogisticRegressionModel, NoisyGradientDescent, SVTSession,
                            SparseVectorMechanism)
from odp.mechanisms.builtin import BUILTIN_KEY
from odp.neighbours import Neighbours
from odp.samplers import SecureRandom

from ledger_forgery import rewrite_relation

RO, AR = Neighbours.REPLACE_ONE, Neighbours.ADD_REMOVE
DATA = [3, 1, 4, 1, 5, 9, 2, 6]
XY = (np.array([[0.5], [-2.0], [3.0]]), np.array([1.0, -1.0, 1.0]))
SGD = dict(n=3, sampling_rate=1, noise_multiplier=1, epochs=2, delta="1e-3", clip=1,
           granularity="1/4")


class CountingRandom:
    """odp's secure randomness, counting the draws (a round refused before any noise makes
    none)."""

    secure = True

    def __init__(self) -> None:
        self._rng = SecureRandom()
        self.draws = 0

    def randbelow(self, n: int) -> int:
        self.draws += 1
        return self._rng.randbelow(n)


class AddRemoveCount(odp.Mechanism):
    """A user's mechanism that states its relation (and must never run when refused)."""

    name = "my_count"
    neighbours = AR

    def __init__(self, neighbours=AR):
        self.neighbours = neighbours
        self.ran = False

    @property
    def guarantee(self):
        return odp.DP("0.1")

    def release(self, data, rng):
        self.ran = True
        return len(data)


class Unstated(AddRemoveCount):
    """A user's mechanism that states no relation: the accountant's (the user's claim)."""

    neighbours = None

    def __init__(self):
        self.ran = False


# ------------------------------------------------------------------ the value
def test_the_typed_relation_parses_the_two_strings_and_nothing_else():
    assert Neighbours.parse("replace-one") is RO and Neighbours.parse(AR) is AR
    assert Neighbours.parse("add-remove") is AR and str(AR) == "add-remove"
    assert repr(RO) == "Neighbours.REPLACE_ONE" and RO.value == "replace-one"
    assert Neighbours.of_record(None) is RO  # a ledger made before odp recorded it
    assert RO.public_size and not AR.public_size
    assert "same size" in RO.describe() and "added or removed" in AR.describe()
    for bad in ("swap", "replace_one", "REPLACE_ONE", None, 1, ("add-remove",)):
        with pytest.raises(InvalidParameter, match="REPLACE_ONE or odp.Neighbours.ADD_REMOVE"):
            Neighbours.parse(bad)
    assert odp.Neighbours is Neighbours and "Neighbours" in odp.__all__


def test_the_mismatch_names_both_relations_and_how_to_convert():
    acc = odp.Accountant(1)
    with pytest.raises(NeighboursMismatch) as err:
        acc.charge(odp.DP("0.1"), neighbours=AR)
    message = str(err.value)
    assert "holds for add-remove neighbours, but this accountant's rounds hold for replace-one" \
        in message
    assert "ReplaceOneComposition" in message and "(2ε, (1 + e^ε)·δ)" in message
    assert "nothing was reserved or charged" in message and "Theorem 7" in message
    assert err.value.round_relation is AR and err.value.accountant is RO
    assert isinstance(err.value, InvalidParameter)
    other = odp.Accountant(1, neighbours="add-remove")
    with pytest.raises(NeighboursMismatch, match="does not convert to add/remove"):
        other.charge(odp.DP("0.1"), neighbours="replace-one")
    with pytest.raises(InvalidParameter, match="neighbours of the charged guarantee must be"):
        other.charge(odp.DP("0.1"), neighbours="swap")
    assert acc.history == [] and other.history == []


# ------------------------------------------------------------------ every path refuses
def _paths(acc_relation: Neighbours):
    """(name, call) for each way a round reaches an accountant of ``acc_relation``, with a
    round of the other relation."""
    other = AR if acc_relation is RO else RO
    g = odp.ODP(lambda r: "lo" if r < 5 else "hi", {"lo": "0.05", "hi": "0.2"})
    paths = {
        "charge": lambda acc: acc.charge(odp.DP("0.1"), neighbours=other),
        "charge with delta= (a converted notion)": lambda acc: acc.charge(
            odp.ZCDP("0.01"), delta="1e-6", neighbours=other.value),
        "reserve": lambda acc: acc.reserve(g, neighbours=other),
        "reserve_many": lambda acc: acc.reserve_many([g, odp.DP("0.1")], neighbours=other),
        "charge_many": lambda acc: acc.charge_many([odp.DP("0.1"), (g, 1)], neighbours=other),
        "run, a user's mechanism stating its relation": lambda acc: acc.run(
            AddRemoveCount(other), DATA),
    }
    if acc_relation is AR:  # odp's own mechanisms are replace-one
        paths.update({
            "run, Laplace": lambda acc: acc.run(odp.LaplaceMechanism(len, epsilon="0.1"), DATA),
            "run, SVT": lambda acc: acc.run(
                SparseVectorMechanism([len], 1, epsilon1="0.1", epsilon2="0.1", c=1), DATA),
            "run, noisy gradient descent": lambda acc: acc.run(
                NoisyGradientDescent(n=3, dim=1, epsilon_step="1/10", stops=[1, 2]), XY),
            "run, DP-SGD built for replace-one": lambda acc: acc.run(
                DPSGD(LogisticRegressionModel(1), **SGD, neighbours="replace-one"), XY),
            "SVT session": lambda acc: SVTSession(acc, DATA, epsilon1="0.1", epsilon2="0.1",
                                                  c=1),
            "dpsgd.Accounting built for replace-one": lambda acc: Accounting(
                acc, sampling_rate="1/10", noise_multiplier=2, max_steps=20, delta="1e-6",
                neighbours=RO),
        })
    else:
        paths.update({
            "run, DP-SGD (add/remove)": lambda acc: acc.run(
                DPSGD(LogisticRegressionModel(1), **SGD), XY),
            "dpsgd.Accounting (add/remove)": lambda acc: Accounting(
                acc, sampling_rate="1/10", noise_multiplier=2, max_steps=20, delta="1e-6"),
        })
    return paths


@pytest.mark.parametrize("relation", [RO, AR], ids=str)
def test_every_path_refuses_a_round_of_another_relation_before_any_noise(backend, relation):
    """On a real SQLite and PostgreSQL ledger of each relation: every way of offering a round
    of the other relation raises NeighboursMismatch, draws no randomness and writes nothing —
    the ledger is the same byte for byte."""
    spec = backend.create("10", "1e-2", neighbours=relation)
    rng = CountingRandom()
    acc = odp.Accountant(ledger=spec, rng=rng)
    assert acc.neighbours is relation and acc.ledger.neighbours_recorded
    before = backend.dump(spec)
    for name, call in _paths(relation).items():
        with pytest.raises(NeighboursMismatch, match="so the round is refused"):
            call(acc)
        assert acc.history == [] and rng.draws == 0, name
        assert acc.remaining == odp.Budget("10", "1e-2"), name
    acc.close()
    assert backend.dump(spec) == before
    # the same relation is accepted (the control): a round is recorded
    with odp.Accountant(ledger=spec, rng=rng) as acc:
        acc.charge(odp.DP("0.1"), neighbours=relation)
        acc.run(AddRemoveCount(relation), DATA)
        assert len(acc.history) == 2 and acc.history[1].mechanism == "my_count"


def test_lanes_refuse_a_round_of_another_relation_before_its_lane_is_charged():
    """A laned ledger: the zCDP lane (odp's Gaussian's exact ρ, a ZCDP charge) and the Rényi
    lane (DP-SGD paid stretch by stretch) refuse a round of another relation before anything
    is charged; a round of the accountant's relation is charged as before."""
    rng = CountingRandom()
    zcdp = odp.Accountant(2, "1e-5", composition="zcdp", rng=rng, neighbours=AR)
    with pytest.raises(NeighboursMismatch):
        zcdp.run(odp.GaussianMechanism(len, epsilon=1, sigma=10), DATA)
    with pytest.raises(NeighboursMismatch):
        zcdp.charge(odp.ZCDP("0.01"), neighbours=RO)
    assert zcdp.history == [] and zcdp.lanes[0].spent == (0,) and rng.draws == 0
    zcdp.charge(odp.ZCDP("0.01"), neighbours=AR)
    assert zcdp.lanes[0].spent == (Fraction(1, 100),)

    renyi = odp.Accountant("10", "4e-6", lanes=[Lane.renyi("10", "4e-6", orders=[13])],
                           rng=rng)  # replace-one: DP-SGD's add/remove run is refused
    mech = DPSGD(LogisticRegressionModel(1), **SGD)
    with pytest.raises(NeighboursMismatch, match="the dpsgd mechanism holds for add-remove"):
        renyi.run(mech, XY)
    with pytest.raises(NeighboursMismatch, match="the training run 'loop' holds for add-remove"):
        Accounting(renyi, sampling_rate="1/10", noise_multiplier=2, max_steps=20, name="loop")
    assert renyi.history == [] and renyi.lanes[0].spent == (0,) and rng.draws == 0


def test_a_mechanism_without_a_stated_relation_takes_the_accountants():
    """A user's mechanism that states none is taken to hold for the accountant's relation (the
    user's claim), whichever it is; odp's own mechanisms state theirs."""
    for relation in (RO, AR):
        acc = odp.Accountant(1, neighbours=relation)
        mech = Unstated()
        assert acc.run(mech, DATA) == len(DATA) and mech.ran
        acc.charge(odp.DP("0.1"))  # no neighbours=: the accountant's
        assert len(acc.history) == 2
    for mech in (odp.LaplaceMechanism(len, epsilon=1), odp.ToyMechanism(len, epsilon=1),
                 odp.RandomizedResponse(lambda d: d[0] > 2, epsilon=1),
                 NoisyGradientDescent(n=3, dim=1, epsilon_step="1/10", stops=[1])):
        assert mech.neighbours is RO
    assert DPSGD(LogisticRegressionModel(1), **SGD).neighbours is AR
    assert DPSGD(LogisticRegressionModel(1), **SGD, neighbours="replace-one").neighbours is RO
    assert odp.Mechanism.neighbours is None


def test_a_dpsgds_relation_cannot_be_relabelled_after_it_is_built(tmp_path: Path):
    """DP-SGD's accounting is computed for the relation it is built with (add/remove, or
    replace-one by group privacy in the constructor): relabelling an instance would state a
    guarantee nobody computed, so it is refused and the instance keeps its relation."""
    for built, other in ((AR, "replace-one"), (RO, Neighbours.ADD_REMOVE)):
        mech = DPSGD(LogisticRegressionModel(1), **SGD, neighbours=built)
        with pytest.raises(InvalidParameter, match="fixed when it is built"):
            mech.neighbours = other
        assert mech.neighbours is built
    # the instance is still odp's own: run in an accountant of its relation, it is built-in
    acc = odp.Accountant(100, "1e-2", ledger=str(tmp_path / "l.db"), neighbours="add-remove")
    mech = DPSGD(LogisticRegressionModel(1), **SGD)
    with pytest.raises(InvalidParameter):
        mech.neighbours = "replace-one"
    acc.run(mech, XY)
    assert acc.last_round.params.get(BUILTIN_KEY) is not None


def test_a_refused_user_mechanism_never_runs():
    acc = odp.Accountant(1)
    mech = AddRemoveCount()
    with pytest.raises(NeighboursMismatch, match="the my_count mechanism holds for add-remove"):
        acc.run(mech, DATA)
    assert not mech.ran and acc.history == []


def test_opendp_measurements_state_the_relation_their_metric_and_d_in_cover():
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib", "honest-but-curious")
    from odp.adapters.opendp import relations_covered

    count = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())
    laplace = count >> dp.m.then_laplace(scale=4.0)
    one, two = odp.from_opendp(laplace, 1), odp.from_opendp(laplace, 2)
    assert one.neighbours is AR and one.covers == {AR}  # one insertion or deletion
    assert two.neighbours is None and two.covers == {AR, RO}  # a replacement is distance 2
    rng = CountingRandom()
    acc = odp.Accountant(1, rng=rng)
    with pytest.raises(NeighboursMismatch, match="the opendp mechanism holds for add-remove"):
        acc.run(one, DATA)
    assert acc.history == []
    acc.run(two, DATA)  # covers both: this accountant's
    odp.Accountant(1, neighbours=AR).run(one, DATA)
    with pytest.raises(InvalidParameter, match="covers add-remove neighbours, not replace-one "
                                               r"\(replacing a record is distance 2"):
        odp.from_opendp(laplace, 1, neighbours="replace-one")
    assert odp.from_opendp(laplace, 2, neighbours=AR).neighbours is AR
    changed = dp.m.make_user_measurement(
        dp.vector_domain(dp.atom_domain(T=int), size=8), dp.change_one_distance(),
        dp.max_divergence(), function=lambda x: 0, privacy_map=lambda d: 0.5 * d)
    assert odp.from_opendp(changed, 1).neighbours is RO
    with pytest.raises(NeighboursMismatch):
        odp.Accountant(1, neighbours=AR).run(odp.from_opendp(changed, 1), DATA)
    scalar = dp.m.make_laplace(dp.atom_domain(T=float, nan=False),
                               dp.absolute_distance(T=float), scale=10.0)
    assert odp.from_opendp(scalar, 1.0).neighbours is None  # no dataset metric: the claim
    assert odp.from_opendp(scalar, 1.0, neighbours=AR).neighbours is AR
    assert relations_covered("InsertDeleteDistance()", 3) == {AR, RO}
    with pytest.raises(InvalidParameter, match="covers no pair of neighbouring datasets"):
        odp.from_opendp(laplace, 0)


# ------------------------------------------------------------------ the ledger records it
def test_the_relation_is_recorded_and_survives_reopen_and_a_mismatch_writes_nothing(backend):
    spec = backend.create("1", "1e-6", neighbours="add-remove")
    table = backend.table("meta")
    assert ("neighbours", "add-remove") in [tuple(r) for r in backend.sql(
        spec, f"SELECT key, value FROM {table}")]
    with odp.Accountant(ledger=spec) as acc:  # the relation it records
        assert acc.neighbours is AR and acc.ledger.genesis.neighbours == "add-remove"
        acc.charge(odp.DP("0.1"))
    before = backend.dump(spec)
    with pytest.raises(LedgerError, match="holds rounds for add-remove neighbours, not "
                                          "replace-one .* nothing was written"):
        odp.Accountant(ledger=spec, neighbours="replace-one")
    with pytest.raises(InvalidParameter, match="neighbours must be"):
        odp.Accountant(ledger=spec, neighbours="swap")
    assert backend.dump(spec) == before
    with odp.Accountant(ledger=spec, neighbours=AR) as acc:
        assert len(acc.history) == 1 and acc.neighbours is AR
    default = backend.create("1", "1e-6")  # a new ledger: replace-one
    with odp.Accountant(ledger=default) as acc:
        assert acc.neighbours is RO and acc.ledger.neighbours_recorded


def test_the_genesis_hash_binds_the_relation(backend):
    spec = backend.create("1", "1e-6", neighbours="add-remove")
    table = backend.table("meta")
    if backend.name == "sqlite":
        for statement in ("DROP TRIGGER meta_no_update",
                          f"UPDATE {table} SET value = 'replace-one' WHERE key = 'neighbours'"):
            backend.sql(spec, statement)
    else:
        for statement in (f"ALTER TABLE {table} DISABLE TRIGGER USER",
                          f"UPDATE {table} SET value = 'replace-one' WHERE key = 'neighbours'",
                          f"ALTER TABLE {table} ENABLE TRIGGER USER"):
            backend.sql(spec, statement)
    with pytest.raises(LedgerCorrupted):
        odp.Accountant(ledger=spec)


def test_the_genesis_encoding_keeps_old_hashes_and_separates_every_field():
    old = Genesis("id", Fraction(1), Fraction(0))
    assert old.hash == Genesis("id", Fraction(1), Fraction(0), None, None, None).hash
    forms = [Genesis("id", Fraction(1), Fraction(0), None, lanes, rel).hash
             for lanes in (None, "replace-one", "[]") for rel in (None, "replace-one",
                                                                    "add-remove")]
    assert len(set(forms)) == len(forms)  # a lanes text never reads as a relation, or back
    assert Genesis.from_json(Genesis("id", Fraction(1), Fraction(0),
                                     neighbours="add-remove").to_json()).neighbours == "add-remove"


def _pre_relation_ledger(backend, epsilon="5", delta="1e-3") -> str:
    """A ledger as odp wrote it before it recorded relations: no ``neighbours`` in the
    metadata, the genesis hash without it."""
    spec = backend.create(epsilon, delta)
    if backend.name == "sqlite":
        rewrite_relation(Path(spec), None)
        return spec
    meta = dict(backend.sql(spec, "SELECT key, value FROM odp_meta"))
    old = Genesis(meta["ledger_id"], Fraction(meta["epsilon"]), Fraction(meta["delta"]))
    for statement in ("ALTER TABLE odp_meta DISABLE TRIGGER USER",
                      "DELETE FROM odp_meta WHERE key = 'neighbours'",
                      f"UPDATE odp_meta SET value = '{old.hash}' WHERE key = 'genesis_hash'",
                      "ALTER TABLE odp_meta ENABLE TRIGGER USER"):
        backend.sql(spec, statement)
    return spec


def test_a_ledger_made_before_the_relation_was_recorded_is_replace_one(backend, tmp_path,
                                                                       capsys):
    spec = _pre_relation_ledger(backend)
    with odp.Accountant(ledger=spec, rng=odp.SeededRandom(1)) as acc:
        assert acc.neighbours is RO and not acc.ledger.neighbours_recorded
        acc.run(odp.LaplaceMechanism(len, epsilon="0.5"), DATA)
        with pytest.raises(NeighboursMismatch):
            acc.run(DPSGD(LogisticRegressionModel(1), **SGD), XY)
        assert len(acc.history) == 1
    with pytest.raises(LedgerError, match="holds rounds for replace-one neighbours, not "
                                          "add-remove"):
        odp.Accountant(ledger=spec, neighbours=AR)
    with odp.Accountant(ledger=spec, neighbours="replace-one") as acc:
        cert = acc.certificate()
    assert "neighbours" not in cert.sidecar and "# neighbours" not in cert.text
    assert "neighbours" not in cert.sidecar["ledger"]["genesis"]
    result = verify(cert.text, cert.sidecar)
    assert result.ok, result.message
    assert result.relation.relation is RO and not result.relation.recorded
    said = " ".join(result.trust.established)
    assert "every round holds for replace-one neighbours — the one relation Theorem 7 " \
           "composes (the certificate records no relation" in said
    capsys.readouterr()
    assert cli_main(["ledger", "show", spec]) == 0
    assert "neighbours replace-one (none recorded: a ledger made before odp recorded it" in \
        capsys.readouterr().out
    assert cli_main(["ledger", "show", spec, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["neighbours"] == {"relation": "replace-one", "recorded": False}


# ------------------------------------------------------------------ certificates
def _certify(path: Path, cert: Path) -> tuple[str, dict]:
    assert cli_main(["certify", str(path), "-o", str(cert), "--force"]) == 0
    return cert.read_text(), json.loads(Path(str(cert) + ".json").read_text())


def _verify(capsys, cert: Path, *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = cli_main(["verify", str(cert), *extra])
    return code, capsys.readouterr().out


def _write(cert: Path, text: str, sidecar: dict) -> None:
    cert.write_text(text)
    Path(str(cert) + ".json").write_text(json.dumps(sidecar))


def test_an_add_remove_certificate_says_its_relation(tmp_path, capsys):
    ledger = tmp_path / "sgd.db"
    with odp.Accountant("20", "1e-2", ledger=ledger, rng=odp.SeededRandom(3),
                        neighbours=AR) as acc:
        acc.run(DPSGD(LogisticRegressionModel(1), **SGD), XY)
        acc.charge(odp.DP("0.5"))
    text, side = _certify(ledger, tmp_path / "sgd.cert")
    assert side["neighbours"] == "add-remove" and side["ledger"]["genesis"]["neighbours"] == \
        "add-remove"
    assert "# neighbours add-remove: every round holds for add-remove neighbours" in text
    code, out = _verify(capsys, tmp_path / "sgd.cert", "--ledger", str(ledger))
    assert code == 0, out
    flat = " ".join(out.split())
    assert "every round holds for add-remove neighbours — the one relation Theorem 7 composes" \
        in flat
    capsys.readouterr()
    assert cli_main(["verify", str(tmp_path / "sgd.cert"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["generated_checker"]["neighbours"] == {"relation": "add-remove",
                                                         "recorded": True, "others": []}


@pytest.mark.parametrize("where", ["sidecar", "text", "sidecar and text", "text only removed"])
def test_a_certificate_whose_halves_disagree_on_the_relation_fails(tmp_path, capsys, where):
    """Only one half edited: the halves disagree.  Both edited (the text's digest recomputed)
    on a run of DP charges only: the chain's genesis, from which the text is rebuilt, still
    records replace-one."""
    ledger = tmp_path / "l.db"
    with odp.Accountant("2", "1e-6", ledger=ledger, rng=odp.SeededRandom(1)) as acc:
        acc.charge(odp.DP("0.5"))
    cert = tmp_path / "c.cert"
    text, side = _certify(ledger, cert)
    line = ("# neighbours replace-one: every round holds for replace-one neighbours, the one "
            "relation Theorem 7 composes\n")
    assert line in text
    if "sidecar" in where:
        side["neighbours"] = "add-remove"
    if where.startswith("text") or "and text" in where:
        new = ("" if where == "text only removed" else
               line.replace("replace-one", "add-remove"))
        text = text.replace(line, new)
        import hashlib

        side["text_sha256"] = hashlib.sha256(text.encode()).hexdigest()  # a careful forger
    _write(cert, text, side)
    code, out = _verify(capsys, cert)
    assert code == 1, out
    flat = " ".join(out.split())
    if where == "sidecar and text":
        assert "chain: the certificate's text is not the one its chained rows produce" in flat
    else:
        assert "the text records the neighbouring relation" in flat
        assert "[rule neighbours]" in flat


def test_a_forged_relation_with_its_chain_recomputed_fails_at_the_built_in_round(tmp_path,
                                                                                capsys):
    """A forger rewrites the ledger's relation to add-remove with the genesis and every row
    rehashed (no key: self-consistent): the certificate's own Laplace round is odp's
    replace-one mechanism, so verify fails at that row (exit 1)."""
    ledger = tmp_path / "l.db"
    with odp.Accountant("2", "1e-6", ledger=ledger, rng=odp.SeededRandom(1)) as acc:
        acc.charge(odp.DP("0.25"))
        acc.run(odp.LaplaceMechanism(len, epsilon="0.5"), DATA)
    rewrite_relation(ledger, "add-remove")
    with SQLiteLedger(ledger, readonly=True) as led:  # the forged ledger itself opens
        assert led.neighbours is AR
    cert = tmp_path / "forged.cert"
    text, side = _certify(ledger, cert)
    assert side["neighbours"] == "add-remove"
    code, out = _verify(capsys, cert)
    assert code == 1
    assert ("FAIL row 2: round 2 is of a built-in mechanism that holds for replace-one "
            "neighbours, but the certificate records add-remove") in " ".join(out.split())
    # a DP-SGD round claiming add-remove in a replace-one certificate fails the same way
    ledger2 = tmp_path / "l2.db"
    with odp.Accountant("20", "1e-2", ledger=ledger2, rng=odp.SeededRandom(1),
                        neighbours=AR) as acc:
        acc.run(DPSGD(LogisticRegressionModel(1), **SGD), XY)
    rewrite_relation(ledger2, "replace-one")
    _certify(ledger2, tmp_path / "f2.cert")
    code, out = _verify(capsys, tmp_path / "f2.cert")
    assert code == 1 and "holds for add-remove neighbours, but the certificate records " \
                         "replace-one" in " ".join(out.split())


def test_an_old_certificate_that_mixed_relations_verifies_but_is_not_said_to_compose(
        tmp_path, capsys):
    """Before odp recorded the relation, an accountant took a Laplace round and an add/remove
    DP-SGD round (the accountant wrote the DP-SGD round's record as odp's own): its
    certificate still verifies, records no relation (replace-one), names the DP-SGD round as
    of another relation and does not say Theorem 7 covers the run."""
    ledger = tmp_path / "old.db"
    with odp.Accountant("20", "1e-2", ledger=ledger, rng=odp.SeededRandom(2)) as acc:
        acc.run(odp.LaplaceMechanism(len, epsilon="0.5"), DATA)
        sgd = DPSGD(LogisticRegressionModel(1), **SGD)  # add/remove
        # what Accountant.run recorded for it before relations were checked
        with acc._reserve(sgd.guarantee, mechanism=sgd.name, params=sgd.params(),
                          interactive=False, builtin="dpsgd") as res:
            res.settle(sgd.release(XY, acc.rng))
        assert acc.history[1].params[BUILTIN_KEY] == "dpsgd"
    rewrite_relation(ledger, None)
    text, side = _certify(ledger, tmp_path / "old.cert")
    assert "neighbours" not in side
    code, out = _verify(capsys, tmp_path / "old.cert")
    assert code == 0, out
    flat = " ".join(out.split())
    assert ("that every round holds for one neighbouring relation: the certificate records "
            "none (made before odp recorded it, which means replace-one), but built-in round(s) "
            "2 (add-remove) hold for another relation") in flat
    assert "certificate_sound_builtin (Theorem 7 for this run)" not in flat
    assert "every round holds for replace-one" not in flat


def test_a_version_1_certificate_without_a_relation_still_verifies():
    """A certificate without a chain (sidecar version 1) and without a relation, as odp wrote
    it before both: it verifies, replace-one."""
    from odp.certs.export import build_certificate

    acc = odp.Accountant("1", rng=odp.SeededRandom(1))
    acc.run(odp.LaplaceMechanism(len, epsilon="0.5"), DATA)
    cert = build_certificate(acc.budget, acc.history, "run-1")
    assert cert.sidecar["version"] == 1 and "neighbours" not in cert.sidecar
    result = verify(cert.text, cert.sidecar)
    assert result.ok and result.relation.relation is RO and not result.relation.recorded
    side = dict(cert.sidecar, neighbours="replace-one")  # a relation in one half only
    assert not verify(cert.text, side).ok
    assert verify(cert.text, dict(cert.sidecar, neighbours="replace-one")).rule == "neighbours"


def test_ledger_init_and_show_carry_the_relation(tmp_path, capsys):
    path = tmp_path / "ar.db"
    assert cli_main(["ledger", "init", str(path), "--epsilon", "1", "--delta", "1e-6",
                     "--neighbours", "add-remove"]) == 0
    assert "for add-remove neighbours" in capsys.readouterr().out
    assert cli_main(["ledger", "show", str(path)]) == 0
    assert "neighbours add-remove (every round holds for it; recorded in the genesis)" in \
        capsys.readouterr().out
    assert cli_main(["ledger", "show", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["neighbours"] == {"relation": "add-remove",
                                                                 "recorded": True}
    with pytest.raises(SystemExit) as exit_:
        cli_main(["ledger", "init", str(tmp_path / "x.db"), "--epsilon", "1", "--neighbours",
                  "swap"])
    assert exit_.value.code == 2 and not (tmp_path / "x.db").exists()
    conn = sqlite3.connect(path)
    assert dict(conn.execute("SELECT key, value FROM meta"))["neighbours"] == "add-remove"
    conn.close()


def test_an_accountant_given_a_ledger_object_keeps_its_relation():
    ledger = odp.ledger.MemoryLedger(odp.Budget(1), neighbours=AR)
    assert odp.Accountant(ledger=ledger).neighbours is AR
    with pytest.raises(LedgerError, match="holds rounds for add-remove neighbours"):
        odp.Accountant(ledger=ledger, neighbours=RO)
    described = odp.Accountant(1, neighbours=AR).describe()
    assert "neighbours add-remove" in described
    assert odp.Accountant(1).summary()["neighbours"] == "replace-one"


# ------------------------------------------------------------------ review regressions
def _dump(path: Path) -> bytes:
    """A SQLite ledger byte for byte (the file, its WAL and its head file)."""
    out = b""
    for suffix in ("", "-wal", ".head"):
        p = Path(str(path) + suffix)
        out += suffix.encode() + b"\0" + (p.read_bytes() if p.exists() else b"")
    return out


def _sgd(**extra):
    return DPSGD(LogisticRegressionModel(1), **SGD, **extra)


def test_the_mismatch_message_is_a_few_readable_lines():
    for relation in (AR, RO):
        acc = odp.Accountant(1, neighbours=AR if relation is RO else RO)
        with pytest.raises(NeighboursMismatch) as err:
            acc.charge(odp.DP("0.1"), neighbours=relation)
        lines = str(err.value).splitlines()
        assert 3 <= len(lines) <= 6 and max(map(len, lines)) <= 200, lines
        assert lines[0].endswith("so the round is refused; nothing was reserved or charged.")


def test_a_composition_under_an_accountant_refuses_another_relation_in_a_sub_composition(
        tmp_path):
    """Review finding (HIGH): ConcurrentComposition(data, acc) + launch(SubComposition(filter))
    + run(add/remove DP-SGD) ran the add/remove mechanism inside a replace-one accountant.  The
    sub-composition inherits the accountant's relation and refuses it before any draw, with
    nothing recorded (the ledger byte for byte, the sub-composition's filter)."""
    from odp.filters import BasicFilter
    from odp.interactive.composition import ConcurrentComposition, SubComposition

    ledger = tmp_path / "l.db"
    rng = CountingRandom()
    acc = odp.Accountant(100, "1e-2", ledger=ledger, rng=rng)
    comp = ConcurrentComposition(XY, acc)
    assert comp.neighbours is RO
    inner = BasicFilter(50, "5e-3")
    sub = comp.launch(SubComposition(inner))
    assert sub.queryable.neighbours is RO  # inherited
    before, history = _dump(ledger), acc.history
    mech = _sgd()
    with pytest.raises(NeighboursMismatch, match="the dpsgd mechanism holds for add-remove "
                                                 "neighbours, but this composition's rounds"):
        sub.run(mech)
    with pytest.raises(NeighboursMismatch):  # nested one level deeper: still inherited
        sub.launch(SubComposition(BasicFilter(1))).run(mech)
    assert rng.draws == 0 and len(inner) == 1 and acc.history == history
    assert _dump(ledger) == before
    # a sub-composition stating another relation is refused before its launch is reserved
    n = len(acc.history)
    with pytest.raises(NeighboursMismatch, match="'sub-composition' holds for add-remove"):
        comp.launch(SubComposition(BasicFilter(1), neighbours=AR))
    assert len(acc.history) == n
    # a composition under an accountant has the accountant's relation
    with pytest.raises(NeighboursMismatch):
        ConcurrentComposition(XY, acc, neighbours=AR)
    # the control: the accountant's relation runs
    sub.run(odp.LaplaceMechanism(len, epsilon="0.5"))
    assert len(inner) == 2
    sub.close()
    acc.close()


def test_a_filter_backed_composition_carries_one_relation():
    """A composition over a filter: replace-one unless given; a run or a launch of another
    relation is refused before the filter is charged or anything drawn; sub-compositions
    inherit the relation."""
    from odp.filters import BasicFilter, RDPFilter
    from odp.interactive.composition import ConcurrentComposition, SubComposition

    rng = CountingRandom()
    f = BasicFilter(10, "1e-2")
    c = ConcurrentComposition(XY, f, rng=rng)
    assert c.neighbours is RO
    c.run(odp.LaplaceMechanism(len, epsilon="0.1"))
    loss, draws = f.privacy_loss(), rng.draws
    with pytest.raises(NeighboursMismatch, match="this composition's rounds hold for "
                                                 "replace-one"):
        c.run(_sgd())
    with pytest.raises(NeighboursMismatch):
        c.launch(AddRemoveSession())
    assert f.privacy_loss() == loss and len(f) == 1 and rng.draws == draws
    # an add/remove composition: DP-SGD runs, odp's replace-one Laplace is refused
    g = BasicFilter(100, "1e-2")
    ar = ConcurrentComposition(XY, g, rng=rng, neighbours="add-remove")
    assert ar.neighbours is AR
    ar.run(_sgd())
    assert ar.launch(AddRemoveSession()).query(1) == 0
    with pytest.raises(NeighboursMismatch, match="does not convert to add/remove"):
        ar.run(odp.LaplaceMechanism(len, epsilon="0.1"))
    nested = ar.launch(SubComposition(BasicFilter(1)))
    assert nested.queryable.neighbours is AR
    with pytest.raises(NeighboursMismatch):
        nested.run(odp.LaplaceMechanism(len, epsilon="0.1"))
    assert len(g) == 3
    # a child's cost that states its relation (odp's add/remove RDP curve) is checked too
    from odp import rdp

    r = RDPFilter(2, 10)
    c2 = ConcurrentComposition(XY, r, rng=rng)
    with pytest.raises(NeighboursMismatch, match="holds for add-remove"):
        c2.launch(CurveSession(rdp.subsampled_gaussian_curve("0.01", "1.1", 10, orders=[2])[0]))
    assert len(r) == 0
    with pytest.raises(InvalidParameter, match="neighbours must be"):
        ConcurrentComposition(XY, BasicFilter(1), neighbours="swap")


def _session_classes():
    from odp.interactive.queryable import InteractiveMechanism, Queryable

    class Zero(Queryable):
        def _answer(self, query):
            return 0

    class Session(InteractiveMechanism):
        """A user's interactive mechanism that states add/remove neighbours."""

        name = "my_session"
        neighbours = AR
        cost = odp.DP("0.5")

        def start(self, data, rng):
            return Zero()

    class Curve(InteractiveMechanism):
        """A user's interactive mechanism whose cost is an RDP value stating its relation."""

        name = "curve_session"

        def __init__(self, cost):
            self._cost = cost

        @property
        def cost(self):
            return self._cost

        def start(self, data, rng):
            return Zero()

    return Session, Curve


AddRemoveSession, CurveSession = _session_classes()


def test_an_interactive_mechanism_stating_another_relation_is_not_reserved(tmp_path):
    """Review finding: a user's InteractiveMechanism with neighbours = ADD_REMOVE launched
    under a replace-one accountant was reserved unchecked.  Now refused before the
    reservation: the ledger is unchanged byte for byte; an add/remove accountant takes it."""
    from odp.interactive.composition import ConcurrentComposition

    ledger = tmp_path / "l.db"
    acc = odp.Accountant(10, ledger=ledger)
    comp = ConcurrentComposition(DATA, acc)
    before = _dump(ledger)
    with pytest.raises(NeighboursMismatch, match="the interactive mechanism 'my_session' holds "
                                                 "for add-remove"):
        comp.launch(AddRemoveSession())
    assert acc.history == [] and _dump(ledger) == before
    other = odp.Accountant(10, neighbours=AR)
    handle = ConcurrentComposition(DATA, other).launch(AddRemoveSession())
    assert handle.query(1) == 0 and len(other.history) == 1
    handle.close()


def test_charge_refuses_a_mechanism_object(tmp_path):
    """Review finding: acc.charge(<mechanism>) on a laned ledger was routed to a lane by the
    mechanism's natural guarantees, skipping the relation check (an add/remove DP-SGD charged
    to a replace-one Rényi lane; a replace-one Gaussian to an add/remove zCDP lane).
    charge() takes a guarantee; a mechanism object is refused, nothing written."""
    from odp.errors import InvalidGuarantee

    cases = [
        (None, _sgd()),
        ([Lane.renyi(100, "1e-2", orders=[2, 4, 8, 16, 32])], _sgd()),
        ([Lane.odp(50, "5e-3"), Lane.renyi(50, "5e-3", orders=[2, 4, 8])], _sgd()),
    ]
    for i, (lanes, mech) in enumerate(cases):
        path = tmp_path / f"l{i}.db"
        acc = odp.Accountant(100, "1e-2", ledger=path, lanes=lanes)
        before = _dump(path)
        with pytest.raises(InvalidGuarantee, match="charge\\(\\) takes a guarantee, not a "
                                                   "mechanism \\(the dpsgd mechanism\\)"):
            acc.charge(mech)
        assert acc.history == [] and _dump(path) == before
        acc.close()
    zcdp = odp.Accountant(2, "1e-5", composition="zcdp", neighbours=AR)
    with pytest.raises(InvalidGuarantee, match="the gaussian mechanism"):
        zcdp.charge(odp.GaussianMechanism(len, epsilon=1, sigma=10))
    with pytest.raises(InvalidGuarantee, match="not a mechanism"):
        odp.Accountant(1).charge(odp.LaplaceMechanism(len, epsilon="0.1"))
    assert zcdp.history == [] and zcdp.lanes[0].spent == (0,)
    # what the message says to do instead works
    g = odp.GaussianMechanism(len, epsilon=1, sigma=10)
    with pytest.raises(NeighboursMismatch):
        zcdp.charge(g.guarantee, neighbours=g.neighbours)


def test_odps_add_remove_curves_state_their_relation_and_charge_honours_it(tmp_path):
    """Review finding: rdp.subsampled_gaussian_curve (an add/remove analysis) was charged to a
    replace-one accountant without a word.  odp's add/remove RDP values now carry
    neighbours=ADD_REMOVE; charge() refuses them in a replace-one accountant (ODP lane with
    delta=, and a Rényi lane), refuses an explicit neighbours= that contradicts the tag, and
    takes them in an add/remove accountant."""
    from odp import rdp
    from odp.guarantees import RDP
    from odp.subsampled_rdp import subsampled_discrete_gaussian_curve

    curve = rdp.subsampled_gaussian_curve("0.01", "1.1", 1000, orders=[2, 4, 8, 16, 32])
    accountant = rdp.RDPAccountant(orders=[2, 8]).compose_subsampled_gaussian("0.01", "1.1", 10)
    discrete = subsampled_discrete_gaussian_curve("0.01", "1.1", 10, orders=[2, 8])
    for values in (curve, accountant.rdp(), discrete):
        assert all(v.neighbours is AR for v in values)
    assert rdp.RDPAccountant(orders=[2]).compose_gaussian(2).rdp()[0].neighbours is None
    assert RDP(2, "1/4").neighbours is None and RDP(2, "1/4") != RDP(2, "1/4", neighbours=AR)
    tagged = RDP(2, "1/4", neighbours="add-remove")
    assert RDP.from_json(tagged.to_json()) == tagged and tagged.to_json()["neighbours"] == \
        "add-remove"
    assert "neighbours" not in RDP(2, "1/4").to_json()
    assert repr(tagged) == "RDP(alpha=2, epsilon=0.25, neighbours=add-remove)"

    path = tmp_path / "l.db"
    acc = odp.Accountant(15, "1e-4", ledger=path)  # replace-one
    renyi_path = tmp_path / "r.db"
    renyi = odp.Accountant(15, "1e-4", ledger=renyi_path,
                           lanes=[Lane.renyi(15, "1e-4", orders=[2, 4, 8, 16, 32])])
    before, before_renyi = _dump(path), _dump(renyi_path)
    with pytest.raises(NeighboursMismatch, match="the charged guarantee holds for add-remove"):
        acc.charge(curve, delta="1e-6")
    with pytest.raises(NeighboursMismatch):
        acc.charge(curve[0], delta="1e-6")
    with pytest.raises(NeighboursMismatch):
        renyi.charge(curve)
    with pytest.raises(InvalidParameter, match="states add-remove neighbours .* but "
                                               "neighbours='replace-one' was given"):
        acc.charge(curve, delta="1e-6", neighbours="replace-one")
    with pytest.raises(InvalidParameter, match="was given"):
        renyi.charge(curve, neighbours=RO)
    mixed = [curve[0], RDP(curve[1].alpha, curve[1].epsilon)]  # a curve of mixed relations
    with pytest.raises(odp.errors.InvalidGuarantee, match="state different neighbouring "
                                                          "relations"):
        acc.charge(mixed, delta="1e-6")
    assert acc.history == [] and renyi.history == []
    assert _dump(path) == before and _dump(renyi_path) == before_renyi
    # an add/remove accountant takes them (and neighbours= agreeing with the tag)
    ar = odp.Accountant(15, "1e-4", neighbours=AR)
    ar.charge(curve, delta="1e-6")
    ar.charge(accountant.rdp(), delta="1e-6", neighbours=AR)
    assert len(ar.history) == 2
    acc.close()
    renyi.close()


def _rebuilt_at_text_version_1(ledger: Path, cert: Path) -> None:
    """What a forger without keys can do with a ledger: rebuild its certificate at text version
    1 (no ``mech`` rows) from the same hash chain, as check_chain would with the sidecar's
    text_version, and write both halves."""
    from odp.certs.export import build_certificate, certificate_of
    from odp.ledger.chain import EventRow
    from odp.ledger.records import BudgetState, apply_row

    with SQLiteLedger(ledger, readonly=True) as led:
        chained = certificate_of(led).sidecar["ledger"]
    genesis = Genesis.from_json(chained["genesis"])
    state = BudgetState.for_genesis(genesis)
    rows = [EventRow.from_json(entry[:-1]) for entry in chained["rows"]]
    for row in rows:
        apply_row(state, row)
    v1 = build_certificate(state.total, list(state.rounds), genesis.ledger_id,
                           chain=(genesis, [(r, e[-1]) for r, e in zip(rows, chained["rows"])]),
                           text_version=1)
    assert "mech" not in v1.text.split("\n# neighbours")[1]  # no mech rows to read a kind from
    _write(cert, v1.text, v1.sidecar)


def test_a_forged_relation_fails_in_a_certificate_rebuilt_at_text_version_1(tmp_path, capsys):
    """Review finding: a forged relation passed `odp verify` (and --kernel) once the
    certificate was rebuilt at text_version=1, whose steps have no mech row to read a built-in
    kind from.  The kind is now read from the chain-bound params as well: the forged Laplace
    round fails, its row named (the generated check fails first, so --kernel never starts
    Lean).  An older text version recording a relation fails even without a built-in round."""
    ledger = tmp_path / "l.db"
    with odp.Accountant("2", "1e-6", ledger=ledger, rng=odp.SeededRandom(1)) as acc:
        acc.run(odp.LaplaceMechanism(len, epsilon="0.5"), DATA)  # replace-one, odp's own
    rewrite_relation(ledger, "add-remove")  # the forger, with the chain rehashed
    cert = tmp_path / "downgraded.cert"
    _rebuilt_at_text_version_1(ledger, cert)
    for extra in ((), ("--kernel",)):
        code, out = _verify(capsys, cert, *extra)
        flat = " ".join(out.split())
        assert code == 1, out
        assert ("FAIL row 1: round 1 is of a built-in mechanism that holds for replace-one "
                "neighbours, but the certificate records add-remove") in flat
        assert "kernel:" not in flat
    # DP charges only (no built-in round): the old text version with a relation fails
    plain = tmp_path / "p.db"
    with odp.Accountant("2", "1e-6", ledger=plain, neighbours=AR) as acc:
        acc.charge(odp.DP("0.5"))
    _rebuilt_at_text_version_1(plain, tmp_path / "p.cert")
    code, out = _verify(capsys, tmp_path / "p.cert")
    assert code == 1 and ("records the neighbouring relation add-remove in text version 1, "
                          "which no odp wrote") in " ".join(out.split())
    # the same runs certified as odp writes them verify (the control)
    _certify(plain, tmp_path / "ok.cert")
    assert _verify(capsys, tmp_path / "ok.cert")[0] == 0


def test_opendp_composite_and_unknown_metrics_are_read_or_need_a_stated_relation(tmp_path):
    """Review finding: composite dataset metrics (L01InfDistance(SymmetricDistance()), …) and
    user metrics gave neighbours=None and ran in a replace-one accountant.  L01InfDistance of an
    insert-delete metric is now read (d_in = (l0, l1, l∞)); any metric odp does not know needs
    neighbours= (InvalidParameter naming the metric); nothing is written when refused."""
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib", "honest-but-curious")
    from odp.adapters.opendp import metric_known, relations_covered

    domain = dp.vector_domain(dp.atom_domain(T=int))

    def user(metric):
        return dp.m.make_user_measurement(domain, metric, dp.max_divergence(),
                                          function=lambda x: len(x), privacy_map=lambda d: 0.5,
                                          TO=int)

    partitioned = user(dp.l01inf_distance(dp.symmetric_distance()))
    one = odp.from_opendp(partitioned, (1, 1, 1))
    assert one.neighbours is AR and one.covers == {AR}
    both = odp.from_opendp(partitioned, (2, 2, 2))
    assert both.neighbours is None and both.covers == {AR, RO}
    assert odp.from_opendp(partitioned, (1, 2, 2)).covers == {AR}
    for bad in ((0, 1, 1), (1, 1), 1, (1, True, 1), (1, 1.5, 1)):
        with pytest.raises(InvalidParameter, match="covers no pair of neighbouring datasets"):
            relations_covered("L01InfDistance(SymmetricDistance())", bad)
    with pytest.raises(InvalidParameter, match=r"covers add-remove neighbours, not replace-one"):
        odp.from_opendp(partitioned, (1, 1, 1), neighbours=RO)
    # a user metric, even one named like OpenDP's, is not read: the caller states the relation
    for metric in (dp.user_distance("add or remove one record"),
                   dp.user_distance("SymmetricDistance()")):
        with pytest.raises(InvalidParameter, match=r"cannot read the neighbouring relation off "
                                                   r"OpenDP's input metric .*neighbours="):
            odp.from_opendp(user(metric), 1)
        assert odp.from_opendp(user(metric), 1, neighbours=AR).neighbours is AR
    assert not metric_known("FrameDistance(SymmetricDistance())")
    assert not metric_known("SymmetricIdDistance(…)") and not metric_known(
        "L02InfDistance(SymmetricDistance())")
    assert metric_known("AbsoluteDistance(f64)") and metric_known("SymmetricDistance()")
    with pytest.raises(InvalidParameter, match="FrameDistance"):
        relations_covered("FrameDistance(SymmetricDistance())", 1)
    # the read relation is enforced: refused by a replace-one accountant, nothing written
    path = tmp_path / "l.db"
    rng = CountingRandom()
    acc = odp.Accountant(1, ledger=path, rng=rng)
    before = _dump(path)
    with pytest.raises(NeighboursMismatch, match="the opendp mechanism holds for add-remove"):
        acc.run(one, DATA)
    assert acc.history == [] and _dump(path) == before
    acc.run(both, DATA)  # covers both: the control
    assert len(acc.history) == 1
    acc.close()


def test_replace_one_dpsgd_converts_its_steps_by_group_privacy_exactly_once():
    """Review finding: DPSGD(..., neighbours="replace-one", composition=BasicComposition())
    converted each step to replace-one in its step spec and again in ReplaceOneComposition
    (and capped the converted step δ at 1/2), failing with "no ε below 1e6 certifies δ".  The
    step spec is now the add/remove step (ε_1 at δ_1, as its description says), converted once:
    the run's ε is 2·Σε_k (group privacy of basic composition) and its Lemma 11 δ covers
    (1 + e^{Σε_k})·Σδ_k, checked against mpmath."""
    import mpmath

    from odp.composition import BasicComposition, RDPComposition
    from odp.subsampled_rdp import subsampled_discrete_gaussian_epsilon

    sgd = dict(SGD, n=100, sampling_rate="1/10", noise_multiplier=6, epochs=1, delta="1e-5")
    add_remove = DPSGD(LogisticRegressionModel(1), **sgd, composition=BasicComposition())
    replace = DPSGD(LogisticRegressionModel(1), **sgd, composition=BasicComposition(),
                    neighbours="replace-one")
    k = replace.stops[-1]
    step = replace._step_spec(k)
    assert step.mechanism["neighbours"] == "add-remove"
    assert step.epsilon == subsampled_discrete_gaussian_epsilon(
        replace.q, replace.sigma, 1, step.delta)[0]  # a valid add/remove step, not converted
    assert step.delta < add_remove._step_spec(k).delta / 2  # room for the factor 1 + e^ε
    total = k * step.epsilon
    sup = replace.guarantee.sup_epsilon  # 2·Σε_k rounded up to a short decimal, not 4·Σε_k
    assert 2 * total <= sup <= 2 * total * (1 + Fraction(1, 10**8))
    mpmath.mp.dps = 40
    needed = (1 + mpmath.exp(mpmath.mpf(total.numerator) / total.denominator)) * k * \
        mpmath.mpf(step.delta.numerator) / step.delta.denominator
    assert needed <= mpmath.mpf(replace.lemma11_delta.numerator) / \
        replace.lemma11_delta.denominator
    assert replace.lemma11_delta <= replace.delta_target
    # the same under RDP (the default): 2ε' at the inner δ, as before; its step is add/remove
    rdp_run = DPSGD(LogisticRegressionModel(1), **sgd, composition=RDPComposition(),
                    neighbours="replace-one")
    assert rdp_run._step_spec(k).mechanism["neighbours"] == "add-remove"
    ar = DPSGD(LogisticRegressionModel(1), **sgd, composition=RDPComposition())
    assert ar.guarantee.sup_epsilon < rdp_run.guarantee.sup_epsilon <= \
        3 * ar.guarantee.sup_epsilon
    # and it runs in a replace-one accountant
    acc = odp.Accountant(10, "1e-4", rng=odp.SeededRandom(1))
    rng = np.random.default_rng(0)
    data = (rng.normal(size=(100, 1)), np.where(rng.normal(size=100) > 0, 1.0, -1.0))
    acc.run(replace, data)
    assert acc.history[0].sup_epsilon == sup
