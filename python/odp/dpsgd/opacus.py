"""An accountant Opacus's ``PrivacyEngine`` accepts, backed by :class:`odp.dpsgd.Accounting`.

Opacus (the ``opacus`` extra; torch is never a dependency of odp itself)
trains with ``PrivacyEngine.make_private``, which hooks its accountant's ``step`` into the
``DPOptimizer``: after the noise is added to a step's gradients and *before* the parameters are
updated.  :func:`attach` puts an :class:`OpacusAccountant` there instead of Opacus's own, so
that the training is recorded in odp's ledger through an :class:`~odp.dpsgd.Accounting` —
either one round reserved at its worst case before the first step and settled by Lemma 11 of
Hartmann et al. 2022 at :meth:`OpacusAccountant.stop`, or, on a ledger with a Rényi lane, one
lane round per stretch of steps, each paid before the stretch runs
(:mod:`odp.dpsgd.renyi_lane`) — and appears in the accountant's certificate::

    acc = odp.Accountant(epsilon=8, delta="1e-5", ledger="runs.ledger")
    run = odp.dpsgd.Accounting(acc, sampling_rate=Fraction(1, len(loader)),
                               noise_multiplier="1.1", delta="1e-6", max_steps=5 * len(loader),
                               stops=len(loader))
    engine = PrivacyEngine()
    odp_acc = attach(engine, run)                  # before make_private
    model, optimizer, loader = engine.make_private(module=model, optimizer=optimizer,
        data_loader=loader, noise_multiplier=1.1, max_grad_norm=1.0)
    ... train; engine.get_epsilon(1e-6) is odp's rigorous upper bound for the steps so far ...
    odp_acc.stop()                                 # settles the ledger round

Each ``step(noise_multiplier=…, sample_rate=…)`` Opacus reports is checked against the step
the accounting reserved: the noise multiplier must be at least, and the sample rate at most,
the accounted ones (up to float rounding, relative 1e-12: Opacus passes floats such as
``1/len(loader)``); a mismatch raises ``ValueError`` inside the optimizer step, before the
parameters are updated, and counts nothing.  A step beyond ``max_steps`` raises
:class:`~odp.dpsgd.StepLimitReached` the same way.

**Before the noise.**  Opacus calls its accountant's hook *after* it has added a step's noise.
So that a step is checked — and, in a Rényi lane, its stretch paid — *before* its noise is
drawn, the hook wraps the ``DPOptimizer``'s ``add_noise`` the first time it runs (an attribute
of that optimizer object; Opacus's classes are not changed): from the second step on, the
wrapper checks the step's noise multiplier and sample rate and calls
:meth:`~odp.dpsgd.Accounting.prepare_step` before the original ``add_noise``; a refusal
(``ValueError``, :class:`~odp.errors.BudgetExceeded`, :class:`~odp.dpsgd.StepLimitReached`)
leaves ``p.grad`` un-noised and the parameters unchanged.  The first step is covered by what
the accounting paid when it was created (the first stretch, or the whole reserved run).

What odp cannot see: that Opacus's sampler is Poisson sampling at that rate (check a loader's
batch sizes with :func:`odp.dpsgd.check_poisson_batches`), and that torch's floating-point
Gaussian noise is the Gaussian it claims to be (Opacus's ``secure_mode`` addresses the
generator).  The guarantee is that of the declared mechanism.

``make_private_with_epsilon`` calibrates with Opacus's own search; use
:func:`odp.dpsgd.noise_multiplier` (a rigorous upper ε and a closeness statement) and
``make_private`` instead.
"""

from __future__ import annotations

import importlib
from collections import OrderedDict
from fractions import Fraction
from typing import Any, Callable

from ..floats import float_up
from ..ledger import RoundRecord
from .accounting import Accounting

__all__ = ["OpacusAccountant", "attach", "MECHANISM", "RATE_TOLERANCE"]

#: The mechanism name this accountant reports to Opacus.
MECHANISM = "odp"

#: Relative tolerance when a float rate or noise multiplier from Opacus is compared with the
#: exact one accounted (a float such as ``1/250`` is not the rational 1/250).
RATE_TOLERANCE = Fraction(1, 10**12)


class OpacusAccountant:
    """Opacus's accountant protocol (``step``, ``get_epsilon``, ``__len__``, ``mechanism``,
    ``get_optimizer_hook_fn``, ``state_dict``/``load_state_dict``, ``history``) over one
    :class:`~odp.dpsgd.Accounting` run; see the module docstring."""

    def __init__(self, accounting: Accounting):
        if not isinstance(accounting, Accounting):
            raise TypeError("OpacusAccountant wraps an odp.dpsgd.Accounting")
        self.accounting = accounting

    # ------------------------------------------------------------------ Opacus's protocol
    @classmethod
    def mechanism(cls) -> str:
        return MECHANISM

    @property
    def history(self) -> list[tuple[float, float, int]]:
        """``[(noise_multiplier, sample_rate, steps), …]`` of the steps run, as Opacus's
        ``RDPAccountant`` keeps it."""
        out: list[tuple[float, float, int]] = []
        left = self.accounting.steps_run
        for p in self.accounting.schedule.phases:
            if left <= 0:
                break
            n = min(left, p.steps)
            out.append((float(p.noise_multiplier), float(p.sampling_rate), n))
            left -= n
        return out

    def step(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Register one step, checked against the accounted one (module docstring)."""
        self._check(noise_multiplier, sample_rate)
        self.accounting.step()

    def before_noise(self, *, noise_multiplier: float, sample_rate: float) -> None:
        """Check the next step and make sure it is paid for, before its noise is drawn
        (:meth:`odp.dpsgd.Accounting.prepare_step`; module docstring, "Before the noise")."""
        self._check(noise_multiplier, sample_rate)
        self.accounting.prepare_step()

    def _check(self, noise_multiplier: float, sample_rate: float) -> None:
        k, q, sigma = self.accounting.current()
        try:
            given_sigma, given_q = Fraction(noise_multiplier), Fraction(sample_rate)
        except (TypeError, ValueError, OverflowError):
            raise ValueError(f"odp: step {k}: noise multiplier {noise_multiplier!r} and sample "
                             f"rate {sample_rate!r} must be finite numbers") from None
        if given_sigma < sigma * (1 - RATE_TOLERANCE) or given_q > q * (1 + RATE_TOLERANCE):
            raise ValueError(
                f"odp: step {k} runs with noise multiplier {noise_multiplier} and sample rate "
                f"{sample_rate}, but the accounting reserved noise multiplier >= {float(sigma)} "
                f"and sample rate <= {float(q)}; the step was not counted and must not be used")

    def get_epsilon(self, delta: float, *args: Any, **kwargs: Any) -> float:
        """A rigorous upper bound on ε at ``delta`` for the steps run so far
        (:meth:`odp.dpsgd.Accounting.epsilon`: privacy buckets on the ODP route, the lane-side
        RDP value in a Rényi lane), as a float rounded up.  On the ODP route the ledger charges
        the ODP cost at :meth:`stop` (:meth:`odp.dpsgd.Accounting.charge_if_stopped`)."""
        upper = self.accounting.epsilon(Fraction(delta)).upper
        return float_up(Fraction(upper))

    def __len__(self) -> int:
        return self.accounting.steps_run

    def get_optimizer_hook_fn(self, sample_rate: float) -> Callable[[Any], None]:
        """The hook ``make_private`` attaches to the ``DPOptimizer`` (as Opacus's own); it also
        guards the optimizer's ``add_noise`` (module docstring, "Before the noise")."""
        def hook_fn(optim: Any) -> None:
            self.step(noise_multiplier=optim.noise_multiplier,
                      sample_rate=sample_rate * optim.accumulated_iterations)
            self._guard(optim, sample_rate)
        return hook_fn

    def _guard(self, optim: Any, sample_rate: float) -> None:
        """Wrap ``optim.add_noise`` (once) so that every later step is checked and paid for
        before its noise (:meth:`before_noise`)."""
        if getattr(optim, "_odp_guard", None) is self:
            return
        original = optim.add_noise

        def add_noise(*args: Any, **kwargs: Any) -> Any:
            self.before_noise(noise_multiplier=optim.noise_multiplier,
                              sample_rate=sample_rate * optim.accumulated_iterations)
            return original(*args, **kwargs)

        optim.add_noise = add_noise
        optim._odp_guard = self

    def state_dict(self, destination: Any = None) -> Any:
        if destination is None:
            destination = OrderedDict()
        destination["history"] = self.history
        destination["mechanism"] = MECHANISM
        destination["steps"] = self.accounting.steps_run
        destination["round"] = self.accounting.round_id
        return destination

    def load_state_dict(self, state_dict: Any) -> None:
        """Accept only this run's own state at this very point (a checkpoint saved and loaded
        in the same run).  Resuming a saved run later cannot rewind or extend the reserved
        round: account the resumed training as a new :class:`~odp.dpsgd.Accounting`."""
        if not state_dict or state_dict.get("mechanism") != MECHANISM:
            raise ValueError("state_dict is not an odp accountant's")
        mine = self.state_dict()
        if state_dict.get("round") != mine["round"] or state_dict.get("steps") != mine["steps"]:
            raise ValueError(
                "odp: this state_dict is from another training round or another point of this "
                "one; a resumed run must be accounted as a new odp.dpsgd.Accounting round")

    # ------------------------------------------------------------------ odp
    def stop(self) -> RoundRecord:
        """Settle the run (:meth:`odp.dpsgd.Accounting.stop`; in a Rényi lane nothing more is
        charged)."""
        return self.accounting.stop()


def attach(engine: Any, accounting: Accounting) -> OpacusAccountant:
    """Make ``engine`` (an ``opacus.PrivacyEngine``, before ``make_private``) account through
    ``accounting``; returns the :class:`OpacusAccountant` it now uses."""
    if not hasattr(engine, "accountant"):
        raise TypeError("attach() takes an opacus.PrivacyEngine")
    adapter = OpacusAccountant(accounting)
    engine.accountant = adapter
    return adapter


def _register() -> None:
    """Make :class:`OpacusAccountant` an ``opacus.accountants.IAccountant`` (a virtual subclass)
    when Opacus is installed."""
    try:
        accountants = importlib.import_module("opacus.accountants")
    except ImportError:
        return
    accountants.IAccountant.register(OpacusAccountant)


_register()
