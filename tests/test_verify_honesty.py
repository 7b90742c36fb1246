"""``odp verify`` says "proved" only for rounds odp's own mechanisms made, and lists what each
round's guarantee still rests on.

A round's kind comes from the accountant, which records it (``params["odp_builtin"]``) only for
a mechanism object that is exactly one of odp's classes, constructed by odp and untouched
(``odp.mechanisms.builtin``) — never from a ``name`` attribute or a ``mechanism=`` label.  Each
mislabelled round below (a user's mechanism named ``"laplace"`` or ``"svt"``, a real release
charged under the label ``"laplace"`` at a hundredth of its ε, a user's iterative mechanism, a
user's PTR function, a subclass or a tampered instance of a built-in) is made in a real run on
a SQLite ledger, certified with ``odp certify`` and verified with ``odp verify``: it is reported
*declared*, never proved; the same run's genuine rounds are proved.  No mocks.
"""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import odp
from odp import _lean_rules as lean
from odp.certs import mechanisms, verify
from odp.cli import main
from odp.composition import BucketsComposition, PrefixDeltaSum, StepSpec
from odp.errors import InvalidParameter
from odp.guarantees import DP, ODP
from odp.mechanisms import BOTTOM, Mechanism
from odp.mechanisms.builtin import BUILTIN_KEY, builtin_key
from odp.mechanisms.dpsgd import DPSGD, LogisticRegressionModel
from odp.mechanisms.iterative import IterativeMechanism, NoisyGradientDescent
from odp.mechanisms.noise import LaplaceMechanism, ToyMechanism
from odp.mechanisms.ptr.mechanism import LogBinIQR, PTRFunction
from odp.mechanisms.svt import SparseVectorMechanism, SVTSession
from odp.mechanisms.svt.mechanism import SVTParameters, count_top

from lean_support import toolchain  # noqa: F401  (fixture)

DATA = [3, 1, 4, 1, 5, 9, 2, 6]
XY = (np.array([[0.5], [-2.0], [3.0]]), np.array([1.0, -1.0, 1.0]))


# ------------------------------------------------------------------ the user's mechanisms
class ExactCount(Mechanism):
    """A user's mechanism calling itself ``laplace`` and recording Laplace's parameters, but
    releasing the exact count."""

    name = "laplace"

    @property
    def guarantee(self) -> DP:
        return DP(1)

    def params(self) -> dict:
        return {"query": "len", "sensitivity": "1", "granularity": "1/1000", "epsilon": "1"}

    def release(self, data, rng):
        return len(data)


class ExactSVT(Mechanism):
    """A user's mechanism named ``svt`` with Lemma 8's classes and SVT's parameters, answering
    every query exactly (no noise)."""

    name = "svt"

    def __init__(self):
        self.svt = SVTParameters(Fraction(1, 10), Fraction(2, 10), 1)
        self.queries = [len, sum]

    @property
    def guarantee(self) -> ODP:
        return self.svt.guarantee()

    def params(self) -> dict:
        return {**self.svt.params(), "queries": 2, "thresholds": "5"}

    def release(self, data, rng):
        answers = []
        for q in self.queries:
            answers.append(q(data) >= 5)
            if count_top(answers) >= self.svt.c:
                break
        return tuple(answers)


class IgnoresDefinition9(PTRFunction):
    """A user's PTR function that releases the exact maximum whatever the test (no Def. 9)."""

    name = "ptr"

    def apply(self, data, proposal, rng):
        return BOTTOM if proposal is BOTTOM else max(data)


class ExactLaplace(LaplaceMechanism):
    """A subclass of odp's Laplace mechanism whose release is the exact query value."""

    def release(self, data, rng):
        return self.query(data)


class LoudBuckets(BucketsComposition):
    """A user's composition theorem (here: privacy buckets under another class)."""


class MyModel(LogisticRegressionModel):
    """A user's model class (its gradients could couple records)."""


def _no_noise(rng) -> int:
    return 0


def _tampered_noise() -> LaplaceMechanism:
    m = LaplaceMechanism(len, epsilon=1)
    m._noise = _no_noise  # an instance attribute shadowing the method
    return m


def _tampered_scale() -> LaplaceMechanism:
    m = LaplaceMechanism(len, epsilon=1)
    m.scale_units = Fraction(1, 10**9)  # (the sampler reads it: almost no noise)
    return m


def _tampered_toy() -> ToyMechanism:
    t = ToyMechanism(len, epsilon="1/5")
    t.laplace._noise = _no_noise  # its Laplace part
    return t


def _charge_labelled(acc: odp.Accountant) -> None:
    """A real ε = 1 Laplace release, charged at ε = 0.01 under the label ``laplace``."""
    value = LaplaceMechanism(len, epsilon=1).release(DATA, acc.rng)
    acc.charge(DP("0.01"), value, mechanism="laplace", params={"epsilon": "0.01"})


#: name -> a function making the mislabelled round(s) on an accountant
MISLABELLED = {
    "user mechanism named laplace": lambda acc: acc.run(ExactCount(), DATA),
    "charge labelled laplace": _charge_labelled,
    "user mechanism named svt": lambda acc: acc.run(ExactSVT(), DATA),
    "user iterative mechanism": lambda acc: acc.run(
        IterativeMechanism(lambda h, x, rng: sum(x), stops=[1, 2],
                           steps=StepSpec(Fraction(1, 10))), DATA),
    "user PTR function": lambda acc: acc.run(
        IgnoresDefinition9("0.1", "1e-6").mechanism(Fraction(0)), DATA),
    "subclass overriding release": lambda acc: acc.run(ExactLaplace(len, epsilon=1), DATA),
    "instance noise replaced": lambda acc: acc.run(_tampered_noise(), DATA),
    "instance scale replaced": lambda acc: acc.run(_tampered_scale(), DATA),
    "M_toy with its Laplace part replaced": lambda acc: acc.run(_tampered_toy(), DATA),
    "noisy GD with a user composition": lambda acc: acc.run(
        NoisyGradientDescent(n=3, dim=1, epsilon_step="1/10", stops=[1, 2],
                             rule=PrefixDeltaSum(LoudBuckets())), XY),
    "DP-SGD with a user model": lambda acc: acc.run(
        DPSGD(MyModel(1), n=3, sampling_rate=1, noise_multiplier=1, epochs=1, delta="1e-3",
              clip=1, granularity="1/4", neighbours="replace-one"), XY),
}


def _certify(tmp_path: Path, make, name: str = "run") -> Path:
    """A real run on a SQLite ledger — a genuine Laplace round, then ``make``'s rounds — and
    its certificate, written by ``odp certify``."""
    ledger = tmp_path / f"{name}.db"
    with odp.Accountant("20", "1e-2", ledger=ledger, rng=odp.SeededRandom(5)) as acc:
        acc.run(LaplaceMechanism(len, epsilon="1/2"), DATA)  # odp's own: the control
        make(acc)
    cert = tmp_path / f"{name}.cert"
    assert main(["certify", str(ledger), "-o", str(cert)]) == 0
    return cert


def _report(cert: Path, capsys, *extra: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["verify", str(cert), "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("case", sorted(MISLABELLED))
def test_a_mislabelled_round_is_reported_declared(case, tmp_path, capsys):
    cert = _certify(tmp_path, MISLABELLED[case])
    code, report = _report(cert, capsys)
    assert code == 0, report
    rounds = report["guarantees"]["rounds"]
    control, rest = rounds[0], rounds[1:]
    assert rest
    assert control["mechanism"] == "laplace" and control["name"] == "laplace"
    assert control["status"] == ("proved" if mechanisms.theorem_of("laplace") else "declared")
    for r in rest:
        assert r["mechanism"] in ("dp", "declared"), (case, r)
        assert r["status"] == "declared" and r["theorem"] is None, (case, r)
        assert r["hypotheses"] and r["hypotheses"][0].startswith("declared: the caller's")
    assert report["guarantees"]["proved"] == (1 if control["status"] == "proved" else 0)
    # the ledger records no built-in key for them, and the certificate no built-in row
    side = json.loads(Path(str(cert) + ".json").read_text())
    assert BUILTIN_KEY in side["rounds"][0]["params"]
    assert all(BUILTIN_KEY not in r["params"] for r in side["rounds"][1:])
    assert all(r["mech"] in ("mech dp", "mech declared") for r in side["rounds"][1:])
    # the text report: declared, with what it rests on, in lines of at most 100 columns
    capsys.readouterr()
    assert main(["verify", str(cert)]) == 0
    out = capsys.readouterr().out
    assert all(len(line) <= 100 for line in out.splitlines())
    flat = " ".join(out.split())
    assert "declared: the caller's" in flat and "which code made each release" in flat
    n = len(rounds)
    assert f"guarantees: {report['guarantees']['proved']} of {n} round(s) proved in Lean" in flat


def test_every_label_of_the_issue_was_read_as_built_in_by_name():
    """The mislabelled rounds claim built-in kinds by their names: the rule of certificate text
    version 2 (``by_name``) reads them as built-in, the accountant's record does not."""
    rounds = {
        "laplace": ExactCount().params(),
        "svt": ExactSVT().params(),
        "iterative": IterativeMechanism(lambda h, x, rng: 0, stops=[1, 2],
                                        steps=StepSpec(Fraction(1, 10))).params(),
        "ptr": IgnoresDefinition9("0.1", "1e-6").mechanism(Fraction(0)).params(),
    }
    for name, params in rounds.items():
        assert mechanisms.derive(name, params, by_name=True) is not None, name
        assert mechanisms.derive(name, params) is None, name


def test_odps_own_mechanisms_are_recognised_and_proved(tmp_path, capsys):
    """The control: a run of odp's own mechanisms — each exactly its class, untouched —
    records the built-in key and verifies with every round of a kind with a theorem proved,
    each listing its hypotheses (the noise laws by their Lean names)."""
    ledger = tmp_path / "own.db"
    with odp.Accountant("40", "1e-2", ledger=ledger, rng=odp.SeededRandom(9)) as acc:
        acc.run(LaplaceMechanism(len, epsilon="1/2"), DATA)
        acc.run(ToyMechanism(len, epsilon="1/5"), DATA)
        acc.run(SparseVectorMechanism([len, sum], 5, epsilon1="1/10", epsilon2="1/5", c=1),
                DATA)
        acc.run(LogBinIQR("1/2", "1e-6", base=Fraction(3, 2)).mechanism(Fraction(0)), DATA)
        acc.run(NoisyGradientDescent(n=3, dim=1, epsilon_step="1/10", stops=[1, 2]), XY)
        with SVTSession(acc, DATA, epsilon1="1/10", epsilon2="1/5", c=1) as session:
            session.ask(len, 100)
        recorded = [r.params.get(BUILTIN_KEY) for r in acc.history]
    assert recorded == ["laplace", "toy", "svt", "ptr_iqr", "noisy_gd", "svt"]
    cert = tmp_path / "own.cert"
    assert main(["certify", str(ledger), "-o", str(cert)]) == 0
    code, report = _report(cert, capsys)
    assert code == 0
    rounds = report["guarantees"]["rounds"]
    assert [r["mechanism"] for r in rounds] == ["laplace", "toy", "svt", "ptr", "iter", "svt"]
    for r in rounds:
        theorem = mechanisms.theorem_of(r["mechanism"])
        assert r["theorem"] == theorem and r["status"] == ("proved" if theorem else "declared")
        assert r["hypotheses"] == list(mechanisms.HYPOTHESES[r["mechanism"]])
    assert rounds[0]["hypotheses"][0].startswith("law: clampedLaplace")  # no noise hypothesis
    assert any(h.startswith("noise law: LapTail") for h in rounds[2]["hypotheses"])
    assert any("IQRDataFacts" in h for h in rounds[3]["hypotheses"])
    assert any("Iter.ShiftDominated" in h for h in rounds[4]["hypotheses"])
    assert report["guarantees"]["general"] == mechanisms.GENERAL
    assert "cannot show which code made a release" in mechanisms.GENERAL


def test_every_kind_lists_its_hypotheses_in_the_one_table():
    """Every kind of ``mech`` row has its entry in HYPOTHESES; the noise laws named are the
    hypothesis structures of Odp/Mech/Common/Noise.lean; ERM's DP inside test-and-release, the query
    sensitivity and the user's declarations are among them."""
    assert set(mechanisms.HYPOTHESES) == set(mechanisms.KINDS)
    noise = (Path(__file__).resolve().parents[1] / "Odp" / "Mech" / "Common"
             / "Noise.lean").read_text(encoding="utf-8")
    named = set()
    for items in mechanisms.HYPOTHESES.values():
        assert items
        for h in items:
            if h.startswith("noise law: "):
                named.add(h.split("noise law: ", 1)[1].split(" ", 1)[0])
    assert named == {"LapNoise", "LapTail", "TailNoise", "IntLaw.ShiftWithin", "GaussNoise"}
    for name in named | {"Iter.ShiftDominated", "Iter.PrefixDP", "Iter.StepsDP",
                         "Iter.L1Sensitive", "IQRDataFacts", "ERMRelease", "TestSensitivity",
                         "UtilitySensitivity"}:
        short = name.split(".")[-1]
        assert (f"structure {short} " in noise or f"def {short} " in noise
                or f"def {name} " in noise), name
    assert any("ERM's DP inside test-and-release" in h
               for h in mechanisms.HYPOTHESES["test_release"])
    assert any(h.startswith("sensitivity:") for h in mechanisms.HYPOTHESES["laplace"])
    assert mechanisms.HYPOTHESES["declared"][0].startswith("declared:")


def test_a_mechanism_changed_while_it_runs_is_withheld_and_charged(tmp_path):
    """A query function that replaces the mechanism's noise while it runs: the release is
    withheld (InvalidParameter) and the round is charged its sup (noise may be out)."""
    mech = LaplaceMechanism(lambda d: _sabotage(mech, d), epsilon="1/2")
    acc = odp.Accountant("1", ledger=tmp_path / "m.db", rng=odp.SeededRandom(1))
    with pytest.raises(InvalidParameter, match="modified while it ran"):
        acc.run(mech, DATA)
    last = acc.last_round
    assert last.reason == "failed" and last.charged == Fraction(1, 2)
    assert last.params[BUILTIN_KEY] == "laplace"
    acc.close()


def _sabotage(mech: LaplaceMechanism, data) -> int:
    mech._noise = _no_noise
    return len(data)


def test_the_built_in_key_is_refused_in_a_callers_params(tmp_path):
    """No public call records the built-in key for the caller: each refuses it with
    InvalidParameter and changes nothing."""

    class ClaimsBuiltin(ExactCount):
        def params(self) -> dict:
            return {**super().params(), BUILTIN_KEY: "laplace"}

    acc = odp.Accountant("1", ledger=tmp_path / "k.db")
    claim = {BUILTIN_KEY: "laplace", "epsilon": "1/10"}
    calls = [
        lambda: acc.charge(DP("1/10"), params=claim),
        lambda: acc.charge_many([DP("1/10")], params=claim),
        lambda: acc.reserve(DP("1/10"), params=claim),
        lambda: acc.reserve_many([DP("1/10")], params=claim),
        lambda: acc.run(ClaimsBuiltin(), DATA),
    ]
    for call in calls:
        with pytest.raises(InvalidParameter, match="reserved"):
            call()
    assert acc.history == [] and acc.remaining == odp.Budget(1)
    acc.close()


def test_an_svt_session_is_built_in_only_as_odps_own_and_untouched(tmp_path):
    class Session(SVTSession):
        """A subclass (it could answer anything)."""

    acc = odp.Accountant("2", ledger=tmp_path / "s.db", rng=odp.SeededRandom(2))
    with Session(acc, DATA, epsilon1="1/10", epsilon2="1/5", c=1) as s:
        s.ask(len, 100)
    assert BUILTIN_KEY not in acc.last_round.params
    session = SVTSession(acc, DATA, epsilon1="1/10", epsilon2="1/5", c=1)
    assert session.record.params[BUILTIN_KEY] == "svt"
    session._rho = -10**9  # every later answer would be ⊤
    with pytest.raises(InvalidParameter, match="changed after it reserved"):
        session.ask(len, 100)
    assert not session.open and acc.last_round.charged == Fraction(3, 10)  # its sup
    acc.close()


def test_builtin_identity_follows_the_object():
    m = LaplaceMechanism(len, epsilon=1)
    assert builtin_key(m) == "laplace"
    m.name = "laplace[entry 0]"  # a label: allowed
    assert builtin_key(m) == "laplace"
    assert builtin_key(copy.copy(m)) is None  # not made by its constructor: not sealed
    # Python's own class caches (copyreg's __slotnames__, an __annotations__ read) change nothing
    assert "__slotnames__" in vars(LaplaceMechanism)
    assert LaplaceMechanism.__annotations__ is not None
    assert builtin_key(m) == "laplace" and builtin_key(LaplaceMechanism(len, epsilon=1))
    m.extra = 1  # a new attribute
    assert builtin_key(m) is None
    assert builtin_key(ExactLaplace(len, epsilon=1)) is None
    assert builtin_key(ExactCount()) is None
    ptr = IgnoresDefinition9("0.1", "1e-6").mechanism(Fraction(0))
    assert builtin_key(ptr) is None
    assert builtin_key(LogBinIQR("1/2", "1e-6", base=2).mechanism(Fraction(0))) == "ptr_iqr"
    assert builtin_key(IterativeMechanism(lambda h, x, rng: 0, stops=[1],
                                          steps=StepSpec(Fraction(1, 10)))) is None
    assert builtin_key(DPSGD(LogisticRegressionModel(1), n=3, sampling_rate=1,
                             noise_multiplier=1, epochs=1, delta="1e-3", clip=1,
                             granularity="1/4")) == "dpsgd"


def test_a_class_patched_in_place_is_not_built_in(monkeypatch):
    m = LaplaceMechanism(len, epsilon=1)
    assert builtin_key(m) == "laplace"
    monkeypatch.setattr(LaplaceMechanism, "_noise", lambda self, rng: 0)
    assert builtin_key(m) is None and builtin_key(LaplaceMechanism(len, epsilon=1)) is None
    monkeypatch.undo()
    assert builtin_key(m) == "laplace"


def test_a_text_version_2_certificate_reports_every_round_declared(tmp_path):
    """A certificate written before odp recorded built-in identity (text version 2, kinds read
    from names) still verifies — its mech rows are checked — but no round is proved: the
    labelled charge of the issue reads as a Laplace row, and is reported declared."""
    from odp.certs.export import build_certificate
    from odp.ledger import SQLiteLedger
    from odp.ledger.records import BudgetState, apply_row

    ledger = tmp_path / "old.db"
    from ledger_forgery import rewrite_relation

    with odp.Accountant("5", ledger=ledger, rng=odp.SeededRandom(4)) as acc:
        acc.run(LaplaceMechanism(len, epsilon="1/2"), DATA)
        _charge_labelled(acc)
    # as odp wrote ledgers then, before it recorded the relation (a text version 2 certificate
    # records none: one that does is refused, tests/test_neighbours.py)
    rewrite_relation(ledger, None)
    with SQLiteLedger(ledger, readonly=True) as led:
        events, genesis = led.events(), led.genesis
    state = BudgetState(odp.Budget(genesis.epsilon, genesis.delta))
    for row, _ in events:
        apply_row(state, row)
    cert = build_certificate(odp.Budget(genesis.epsilon, genesis.delta), list(state.rounds),
                             genesis.ledger_id, chain=(genesis, events), text_version=2)
    assert cert.sidecar["text_version"] == 2
    assert [line for line in cert.text.splitlines() if line.startswith("mech")] == [
        "mech laplace 50", "mech laplace 1"]
    result = verify(cert.text, cert.sidecar)
    assert result.ok, result.message
    g = result.guarantees
    assert g["proved"] == 0 and g["declared"] == 2
    for r in g["rounds"]:
        assert r["status"] == "declared" and "text version 2" in r["note"]
        assert r["hypotheses"][0].startswith("declared: that odp's own mechanism made the round")
    assert not any("certificate_sound_builtin" in s for s in result.trust.established)


def test_the_kernel_check_reports_the_same_declared_rounds(toolchain, tmp_path, capsys):  # noqa: F811
    """``odp verify --kernel``: the Lean kernel accepts the certificate of a run with a user's
    mechanism named ``laplace`` and a labelled charge, and they are still reported declared;
    the kernel's final budget is printed as short decimals, not in units of 1/D."""

    def both(acc):
        acc.run(ExactCount(), DATA)
        _charge_labelled(acc)

    cert = _certify(tmp_path, both)
    capsys.readouterr()
    code = main(["verify", str(cert), "--kernel", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["kernel"]["ok"], report.get("kernel")
    statuses = [r["status"] for r in report["guarantees"]["rounds"]]
    assert statuses[1:] == ["declared", "declared"]
    assert "remaining ε=" in report["kernel"]["message"]
    assert "units of 1/" not in report["kernel"]["message"]
    assert lean.LEAN_THEOREMS  # the build's theorems were read



# ------------------------------------------------- a check asked for is done, or it is a failure
@pytest.fixture
def signed(tmp_path):
    """A real ledger certified three ways: Ed25519-signed (a key made by ``odp ledger keygen
    --ed25519``, cryptography's Ed25519), HMAC-tagged (``odp ledger keygen``), unsigned; and a
    version-1 certificate of the same run (no chain)."""
    pytest.importorskip("cryptography")
    ledger = tmp_path / "run.db"
    with odp.Accountant("1", "1e-6", ledger=ledger) as acc:
        acc.charge(DP("1/10"))
        acc.charge(DP("1/5"))
    assert main(["ledger", "keygen", "--ed25519", str(tmp_path / "owner.key")]) == 0
    assert main(["ledger", "keygen", str(tmp_path / "hmac.key")]) == 0
    out = {"ledger": ledger, "pub": tmp_path / "owner.key.pub", "hmac": tmp_path / "hmac.key",
           "head": None}
    for name, extra in (("ed", ["--sign-key", str(tmp_path / "owner.key")]),
                        ("mac", ["--hmac-key", str(tmp_path / "hmac.key")]), ("plain", [])):
        cert = tmp_path / f"{name}.cert"
        assert main(["certify", str(ledger), "-o", str(cert), *extra]) == 0
        out[name] = cert
    side = json.loads(Path(str(out["plain"]) + ".json").read_text())
    head = side["ledger"]["head"]
    out["head"] = f"{head['rows']}:{head['head']}"
    v1 = dict(side, version=1)
    del v1["ledger"]
    out["v1"] = tmp_path / "v1.cert"
    out["v1"].write_text(Path(out["plain"]).read_text())
    Path(str(out["v1"]) + ".json").write_text(json.dumps(v1))
    return out


def _run_verify(capsys, cert: Path, *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["verify", str(cert), *extra])
    out = capsys.readouterr().out
    assert all(len(line) <= 100 for line in out.splitlines())
    return code, " ".join(out.split())


@pytest.mark.parametrize("cert, option, why", [
    ("ed", "hmac", "is signed with Ed25519"),
    ("mac", "pub", "carries an HMAC-SHA256 tag"),
    ("plain", "pub", "is not signed"),
    ("plain", "hmac", "is not signed"),
    ("v1", "pub", "version-1 certificate records no ledger chain"),
    ("v1", "hmac", "version-1 certificate records no ledger chain"),
    ("v1", "head", "version-1 certificate records no ledger chain"),
    ("v1", "ledger", "version-1 certificate records no ledger chain"),
])
def test_a_check_that_cannot_be_applied_fails(signed, capsys, cert, option, why):
    """``odp verify CERT --hmac-key K`` on an Ed25519-signed certificate (and the other
    mismatches): exit 1, naming the option and why its check cannot be done — never OK."""
    flag, value = {"pub": ("--public-key", signed["pub"]), "hmac": ("--hmac-key", signed["hmac"]),
                   "head": ("--expect-head", signed["head"]),
                   "ledger": ("--ledger", signed["ledger"])}[option]
    code, out = _run_verify(capsys, signed[cert], flag, str(value))
    assert code == 1, out
    assert out.startswith("FAIL ") and not out.startswith("OK")
    assert f"{flag} {value}" in out and why in out
    capsys.readouterr()
    assert main(["verify", str(signed[cert]), flag, str(value), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)["generated_checker"]
    assert report["ok"] is False and why in report["message"]


def test_both_keys_given_one_cannot_be_applied(signed, capsys):
    for cert in ("ed", "mac"):
        code, out = _run_verify(capsys, signed[cert], "--public-key", str(signed["pub"]),
                                "--hmac-key", str(signed["hmac"]))
        assert code == 1 and "cannot be applied" in out


def test_a_head_beyond_the_certificate_cannot_be_applied(signed, capsys):
    rows, digest = signed["head"].split(":")
    code, out = _run_verify(capsys, signed["plain"], "--expect-head", f"{int(rows) + 1}:{digest}")
    assert code == 1 and f"--expect-head {int(rows) + 1}:{digest} cannot be applied" in out


def test_the_checks_that_apply_pass_and_say_what_they_established(signed, capsys):
    code, out = _run_verify(capsys, signed["ed"], "--public-key", str(signed["pub"]),
                            "--expect-head", signed["head"], "--ledger", str(signed["ledger"]))
    assert code == 0 and out.startswith("OK") and "(the key you gave)" in out
    code, out = _run_verify(capsys, signed["mac"], "--hmac-key", str(signed["hmac"]))
    assert code == 0 and "HMAC-SHA256 tag by key id" in out


def test_the_opendp_example_is_reported_consistently(tmp_path, capsys):
    """The OpenDP example's run (examples/opendp_laplace.py: a Laplace and a Gaussian count
    through ``odp.from_opendp``): both rounds are DP charges, declared — the summary, the
    established lines and the per-round list say the same thing."""
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    count = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())
    ledger = tmp_path / "opendp.db"
    with odp.Accountant(epsilon="1", delta="1e-6", ledger=ledger) as acc:
        acc.run(odp.from_opendp(count >> dp.m.then_laplace(scale=4.0), d_in=2), DATA)
        acc.run(odp.from_opendp(count >> dp.m.then_gaussian(scale=20.0), d_in=2,
                                delta="1e-6"), DATA)
    cert = tmp_path / "opendp.cert"
    assert main(["certify", str(ledger), "-o", str(cert)]) == 0
    code, out = _run_verify(capsys, cert)
    assert code == 0
    assert "guarantees: 0 of 2 round(s) proved in Lean, 2 declared" in out
    assert "its rounds are 2 DP charge(s) (round(s) 1, 2)" in out
    assert "built-in round" not in out and "every round is of a built-in kind" not in out
    assert "rounds 1-2: dp (recorded as opendp): declared" in out
