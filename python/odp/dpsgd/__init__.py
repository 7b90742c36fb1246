"""DP-SGD where people train: account any training loop, calibrate its noise, check its sampler.

* :class:`Accounting` (:mod:`odp.dpsgd.accounting`) — the accountant of one training run you
  run yourself (numpy, PyTorch, JAX…): reserves the worst case in an :class:`odp.Accountant`'s
  ledger, takes :meth:`~Accounting.step` per noisy step, answers :meth:`~Accounting.epsilon`
  (a rigorous interval) at any time and settles at :meth:`~Accounting.stop` by Alg. 3 and
  Lemma 11 of Hartmann et al. 2022 (early stopping costs only the steps run, rounded up to the
  next stop) or, on a ledger with a Rényi lane, pays each stretch of steps to that lane before
  it runs (:class:`RenyiLaneSettlement`, :mod:`odp.dpsgd.renyi_lane`: no δ split over the
  stops);
* :class:`Schedule` (:mod:`odp.dpsgd.schedule`) — per-step or per-epoch sampling rates and noise
  multipliers, accounted by privacy buckets or Rényi DP (:mod:`odp.dpsgd.compositions`);
* :func:`noise_multiplier` (:mod:`odp.dpsgd.calibrate`) — the smallest noise multiplier, on a
  stated grid, whose *rigorous upper* ε is at most a target, and how close it is to the optimum;
* :func:`check_poisson_batches` (:mod:`odp.dpsgd.sampling`) — are a loader's batch sizes
  consistent with Poisson sampling at the accounted rate (a test with a stated false-alarm rate);
* :mod:`odp.dpsgd.opacus` — an accountant Opacus's ``PrivacyEngine`` accepts, backed by
  :class:`Accounting` (the ``opacus`` extra; imported only when used).

The numpy trainer with exact noise is :class:`odp.mechanisms.DPSGD` (docs/dpsgd.md).
"""

from __future__ import annotations

from .accounting import Accounting, OdpLaneSettlement, StepLimitReached
from .renyi_lane import RenyiLaneSettlement
from .settlement import Settlement
from .calibrate import Calibration, noise_multiplier
from .compositions import ScheduleBuckets, ScheduleRDP
from .sampling import SamplingCheck, check_poisson_batches
from .schedule import Phase, Schedule

__all__ = [
    "Accounting",
    "Settlement",
    "OdpLaneSettlement",
    "Lemma11Settlement",
    "RenyiLaneSettlement",
    "StepLimitReached",
    "Schedule",
    "Phase",
    "ScheduleRDP",
    "ScheduleBuckets",
    "noise_multiplier",
    "Calibration",
    "check_poisson_batches",
    "SamplingCheck",
]

#: The paper's name for the ODP-lane route (Hartmann et al. 2022, Lemma 11).
Lemma11Settlement = OdpLaneSettlement
