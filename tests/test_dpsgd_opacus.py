"""odp.dpsgd.opacus against real Opacus and torch (slow; CPU torch).

Runs where torch and Opacus are installed (a separate virtualenv: they are not in the [test]
extra): ``.venv-opacus/bin/python -m pytest -m slow tests/test_dpsgd_opacus.py``.  Elsewhere it
skips, unless ``ODP_REQUIRE_OPACUS=1`` (CI's Opacus step), where it fails instead."""

from __future__ import annotations

import os
from fractions import Fraction

import pytest

pytestmark = pytest.mark.slow

try:
    import torch
    from opacus import PrivacyEngine
    from opacus.accountants import IAccountant, RDPAccountant
except ImportError as exc:  # pragma: no cover - depends on the environment
    if os.environ.get("ODP_REQUIRE_OPACUS") == "1":
        raise
    pytest.skip(f"OPACUS TESTS NOT RUN: {exc} (set ODP_REQUIRE_OPACUS=1 to fail instead)",
                allow_module_level=True)

import odp  # noqa: E402  (after the skip: this module needs torch and Opacus)
from odp.certs import verify  # noqa: E402
from odp.dpsgd import Accounting, StepLimitReached  # noqa: E402
from odp.dpsgd.opacus import OpacusAccountant, attach  # noqa: E402


#: Opacus's DP-SGD is add/remove: so are these runs' accountants (odp.neighbours)
AR = odp.Neighbours.ADD_REMOVE


def _setup(batches: int = 10, records: int = 200, seed: int = 0):
    torch.manual_seed(seed)
    x = torch.randn(records, 5)
    y = (x[:, 0] > 0).long()
    data = torch.utils.data.TensorDataset(x, y)
    loader = torch.utils.data.DataLoader(data, batch_size=records // batches)
    model = torch.nn.Linear(5, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    return model, optimizer, loader


def _train(model, optimizer, loader, steps: int):
    loss_fn = torch.nn.CrossEntropyLoss()
    done = 0
    while done < steps:
        for xb, yb in loader:
            optimizer.zero_grad()
            loss_fn(model(xb), yb).backward()
            optimizer.step()
            done += 1
            if done == steps:
                return


def test_make_private_training_is_recorded_in_the_ledger_and_certificate(tmp_path):
    ledger = tmp_path / "opacus.ledger"
    acc = odp.Accountant(epsilon=20, delta="1e-4", ledger=str(ledger), neighbours=AR)
    model, optimizer, loader = _setup()
    run = Accounting(acc, sampling_rate=Fraction(1, len(loader)), noise_multiplier="1.0",
                     max_steps=3 * len(loader), stops=len(loader), delta="1e-5",
                     name="opacus linear")
    engine = PrivacyEngine(accountant="rdp")
    adapter = attach(engine, run)
    assert isinstance(adapter, IAccountant) and engine.accountant is adapter
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=1.0,
        max_grad_norm=1.0, poisson_sampling=True)
    _train(model, optimizer, loader, 12)
    assert len(adapter) == 12 and run.steps_run == 12
    # Opacus's own RDP accountant on the same history: odp's rigorous upper bound is below it
    eps = engine.get_epsilon(1e-5)
    rdp = RDPAccountant()
    rdp.history = list(adapter.history)
    assert 0 < float(run.epsilon("1e-5").lower) <= eps <= rdp.get_epsilon(1e-5)
    state = adapter.state_dict()
    adapter.load_state_dict(state)  # the same run at the same point
    record = adapter.stop()
    assert record.label == 20 and record.charged == run.settlement.costs[1]
    cert = acc.certificate()
    result = verify(cert.text, cert.sidecar)
    assert result.ok, result.message
    assert "mech lemma11" in cert.text
    acc.close()
    reopened = odp.Accountant(ledger=str(ledger))
    assert [r.mechanism for r in reopened.history] == ["dpsgd[opacus linear]"]
    reopened.close()


def test_a_step_with_less_noise_than_accounted_is_refused_before_the_update():
    acc = odp.Accountant(epsilon=20, delta="1e-4", neighbours=AR)
    model, optimizer, loader = _setup()
    run = Accounting(acc, sampling_rate=Fraction(1, len(loader)), noise_multiplier="1.0",
                     max_steps=2 * len(loader), delta="1e-5")
    engine = PrivacyEngine()
    attach(engine, run)
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=0.5,
        max_grad_norm=1.0)
    before = [p.detach().clone() for p in model.parameters()]
    with pytest.raises(ValueError, match="noise multiplier"):
        _train(model, optimizer, loader, 1)
    assert run.steps_run == 0
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    assert run.abort().charged == run.reserved[0]


def test_steps_beyond_the_reservation_are_refused():
    acc = odp.Accountant(epsilon=20, delta="1e-4", neighbours=AR)
    model, optimizer, loader = _setup(batches=4)
    run = Accounting(acc, sampling_rate=Fraction(1, 4), noise_multiplier="1.0", max_steps=4,
                     delta="1e-5")
    engine = PrivacyEngine()
    adapter = attach(engine, run)
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=1.0,
        max_grad_norm=1.0)
    _train(model, optimizer, loader, 4)
    with pytest.raises(StepLimitReached):
        _train(model, optimizer, loader, 1)
    assert len(adapter) == 4
    with pytest.raises(ValueError, match="another"):
        adapter.load_state_dict({**adapter.state_dict(), "steps": 2})
    assert adapter.stop().label == 4


def test_the_adapter_without_opacus_objects():
    """The protocol object alone (no engine): history in Opacus's format, mechanism name."""
    acc = odp.Accountant(epsilon=20, delta="1e-4", neighbours=AR)
    run = Accounting(acc, sampling_rate="1/10", noise_multiplier=2, max_steps=30, delta="1e-5")
    a = OpacusAccountant(run)
    for _ in range(3):
        a.step(noise_multiplier=2.0, sample_rate=0.1)
    assert a.history == [(2.0, 0.1, 3)] and a.mechanism() == "odp" and len(a) == 3
    a.stop()


def test_make_private_training_in_a_renyi_lane_pays_each_stretch_before_its_noise(tmp_path):
    """On a ledger with a Rényi lane the adapter's Accounting pays each epoch (a stop) to the
    lane before its first step's noise: 2.5 epochs pay 3 stretches; the certificate verifies."""
    from odp.dpsgd import RenyiLaneSettlement
    from odp.ledger.lanes import Lane

    acc = odp.Accountant(epsilon=20, delta="1e-4", ledger=tmp_path / "lane.ledger",
                         lanes=[Lane.renyi(20, "1e-4", orders=[8, 16, 32])], neighbours=AR)
    model, optimizer, loader = _setup()
    run = Accounting(acc, sampling_rate=Fraction(1, len(loader)), noise_multiplier="2.0",
                     max_steps=5 * len(loader), stops=len(loader), name="opacus lane")
    assert isinstance(run.settlement, RenyiLaneSettlement)
    engine = PrivacyEngine()
    adapter = attach(engine, run)
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=2.0,
        max_grad_norm=1.0, poisson_sampling=True)
    _train(model, optimizer, loader, 25)
    assert len(adapter) == 25
    assert [r.params["steps"] for r in acc.history] == [[1, 10], [11, 20], [21, 30]]
    eps = engine.get_epsilon(run.delta)
    assert eps >= float(run.epsilon().upper) == float(run.settlement.used(25, run.delta))
    adapter.stop()
    cert = acc.certificate()
    assert verify(cert.text, cert.sidecar).ok


def test_a_refused_stretch_stops_opacus_before_the_noise_and_the_update(monkeypatch):
    """A lane that pays one epoch: the first step of the second is refused inside the optimizer
    step, before any noise is generated and before the update."""
    import opacus.optimizers.optimizer as dp_optimizer

    from odp.errors import BudgetExceeded
    from odp.ledger.lanes import Lane

    acc = odp.Accountant(epsilon="1.1", delta="1e-4", lanes=[Lane.renyi("1.1", "1e-4",
                                                                        orders=[8])],
                         neighbours=AR)
    model, optimizer, loader = _setup()
    run = Accounting(acc, sampling_rate=Fraction(1, len(loader)), noise_multiplier="2.0",
                     max_steps=3 * len(loader), stops=len(loader))
    engine = PrivacyEngine()
    attach(engine, run)
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=optimizer, data_loader=loader, noise_multiplier=2.0,
        max_grad_norm=1.0, poisson_sampling=False)  # fixed batches: deterministic test data
    _train(model, optimizer, loader, 10)
    before = [p.detach().clone() for p in model.parameters()]
    noised = []
    generate = dp_optimizer._generate_noise  # Opacus's own noise, counted

    def counted(*args, **kwargs):
        noised.append(1)
        return generate(*args, **kwargs)

    monkeypatch.setattr(dp_optimizer, "_generate_noise", counted)
    with pytest.raises(BudgetExceeded, match="do not run step 11"):
        _train(model, optimizer, loader, 1)
    assert noised == [] and run.steps_run == 10 and len(acc.history) == 1
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
