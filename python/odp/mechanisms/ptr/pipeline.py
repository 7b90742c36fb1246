"""The application of Hartmann et al. 2022, Sec. 4.2 through an accountant: ``M_IQR`` then the
median, with the ε saved when ``M_IQR`` returns ⊥ (:func:`iqr_then_median`)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Sequence

from ...accountant import Accountant
from ...budget import parse_positive
from ..base import BOTTOM
from ..pipeline import check_plan, keep_partial
from ..public import public_size
from .mechanism import ExponentialMedian, IQRMechanism

__all__ = ["IQRMedianResult", "iqr_then_median"]


@dataclass
class IQRMedianResult:
    """Result of :func:`iqr_then_median`.  When the median round was refused or failed (see
    :func:`iqr_then_median`), ``median`` and ``median_round`` are ``None`` and
    :attr:`complete` is ``False``."""

    iqr: Any
    median: Fraction | None
    median_epsilon: Fraction
    iqr_round: Any
    median_round: Any

    @property
    def complete(self) -> bool:
        """Both rounds were released."""
        return self.median_round is not None


def iqr_then_median(accountant: Accountant, data: Sequence[Any], *, epsilon_iqr: Any, delta_iqr: Any,
                    epsilon_median: Any, lower: Any, upper: Any, base: Any = None,
                    resolution: int = 4, candidates: int = 1001) -> IQRMedianResult:
    """Sec. 4.2: ``M_IQR`` with (ε1, δ1) = (``epsilon_iqr``, ``delta_iqr``) — worst case 3ε1 —
    then the median with ε2 = ``epsilon_median``, or with ε1 + ε2 when ``M_IQR`` returned ⊥
    (it was charged 2ε1 only).  See :mod:`odp.mechanisms.pipeline`:

    * every parameter of both rounds is validated and all three mechanisms (``M_IQR`` and the
      median at ε2 and at ε1 + ε2) are built before the first round: a mistake (e.g.
      ``lower >= upper``, fewer than 2 records) raises
      :class:`~odp.errors.InvalidParameter` and costs nothing;
    * the plan (3ε1 + ε2, δ1) must fit in the remaining budget (else ``BudgetExceeded``,
      nothing drawn or recorded);
    * that check is not atomic across processes sharing the ledger: if the median round is then
      refused (``BudgetExceeded``) or fails, the error is re-raised with ``error.partial``, the
      :class:`IQRMedianResult` holding the IQR release (``complete`` is ``False``)."""
    eps1 = parse_positive(epsilon_iqr, name="epsilon_iqr")
    eps2 = parse_positive(epsilon_median, name="epsilon_median")
    iqr_mech = IQRMechanism(epsilon=eps1, delta=delta_iqr,
                            n=public_size(data, what="the database"), base=base,
                            resolution=resolution)
    iqr_mech.check_public(data)
    medians = {bottom: ExponentialMedian(epsilon=eps2 + (eps1 if bottom else 0), lower=lower,
                                         upper=upper, candidates=candidates)
               for bottom in (False, True)}
    check_plan(accountant, 3 * eps1 + eps2, iqr_mech.delta, "IQR then median (3ε1+ε2, δ1)")

    iqr = accountant.run(iqr_mech, data)
    median_mech = medians[iqr is BOTTOM]
    result = IQRMedianResult(iqr, None, median_mech.epsilon, accountant.last_round, None)
    try:
        result.median = accountant.run(median_mech, data)
    except BaseException as error:  # refused (another process spent) or failed: keep the IQR
        keep_partial(error, result)
        raise
    result.median_round = accountant.last_round
    return result
