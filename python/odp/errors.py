"""The one exception hierarchy of odp.

Every error that odp raises on purpose derives from :class:`OdpError`.  A call refused before
its reservation (bad parameters, a wrong public data shape, an over-budget request) changes
nothing: no budget is spent and no ledger row is written.  A failure *after* a round was reserved
(inside the mechanism, or an unclassifiable release) charges that round its worst case, because
noise may already have been drawn; the error says so.

``OdpError``
 ├── ``InvalidParameter`` (also a ``ValueError``): a number or option that is not acceptable
 │    ├── ``InvalidBudget``: NaN, ±inf, negative, δ ≥ 1, or not a number at all
 │    ├── ``InvalidGuarantee``: a guarantee that is malformed or that a release does not fit
 │    ├── ``NeighboursMismatch``: a round declared for another neighbouring relation than its
 │    │    accountant's (nothing drawn, nothing recorded)
 │    └── ``SessionClosed``: an interactive session (SVT) was queried after it ended
 ├── ``BudgetExceeded``: Alg. 1 line 4 refuses the request (nothing drawn, nothing recorded)
 ├── ``LedgerError``: the ledger file is unusable, mismatched or corrupt
 │    └── ``LedgerCorrupted``: the hash chain or the recorded head does not match the rows
 ├── ``CertificateError``: a certificate does not parse or does not replay
 └── ``OutputError`` (also an ``OSError``): a file odp was asked to write could not be written
      (a directory in its place, a missing directory, no permission, a full disk); nothing is
      left behind
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class OdpError(Exception):
    """Base class of every error odp raises on purpose."""


class InvalidParameter(OdpError, ValueError):
    """A parameter value is not acceptable (the message says which and why)."""


class InvalidBudget(InvalidParameter):
    """A privacy budget or cost is not a finite, non-negative number (or δ ≥ 1)."""


@contextmanager
def budget_error_as(error: type[InvalidParameter], prefix: str = "") -> Iterator[None]:
    """A context in which an :class:`InvalidBudget` is raised again as ``error`` with the same
    message (after ``prefix``), its context suppressed; any other exception passes unchanged.

    The one translation of a budget parser's error (:func:`odp.budget.parse_epsilon`,
    :func:`~odp.budget.parse_delta`, :func:`~odp.budget.to_fraction`, …) for a number that is
    checked like a budget but is not one (a target δ, a noise multiplier, a point of an RDP
    curve, a Rényi order): it is reported as :class:`InvalidParameter`, not as
    :class:`InvalidBudget` (or as :class:`InvalidGuarantee` for a guarantee's costs)::

        with budget_error_as(InvalidParameter):
            delta = parse_delta(value, name="delta")
    """
    try:
        yield
    except InvalidBudget as exc:
        raise error(f"{prefix}{exc}") from None


class InvalidGuarantee(InvalidParameter):
    """A privacy guarantee is malformed, or a release does not belong to any declared class."""


class NeighboursMismatch(InvalidParameter):
    """A round's guarantee holds for another neighbouring relation than its accountant's
    (:mod:`odp.neighbours`): refused before any noise is drawn, nothing reserved or charged.
    ``round_relation`` and ``accountant`` are the two :class:`odp.Neighbours`."""

    def __init__(self, message: str, *, round_relation: Any = None, accountant: Any = None):
        super().__init__(message)
        self.round_relation = round_relation
        self.accountant = accountant


class SessionClosed(InvalidParameter):
    """An interactive session (e.g. an SVT session) was asked a query after STOP or after its
    cut-off; nothing was drawn or charged for that query."""


class BudgetExceeded(OdpError):
    """The requested guarantee does not fit in the remaining budget (Alg. 1, line 4).

    Raised *before* any noise is drawn; nothing is recorded.  ``requested`` and ``remaining``
    are :class:`odp.Budget` values (sup-ε of the request, and what is left).
    """

    def __init__(self, message: str, *, requested: Any = None, remaining: Any = None):
        super().__init__(message)
        self.requested = requested
        self.remaining = remaining


class LedgerError(OdpError):
    """The ledger cannot be opened, does not match the accountant, or is corrupt."""


class LedgerCorrupted(LedgerError):
    """The ledger's rows do not match their hash chain, its schema was altered, or rows that the
    recorded head says were committed are missing.  The ledger refuses to charge: the spent
    budget is unknown.  ``row`` is the first bad row (1-based sequence number) when one is
    known."""

    def __init__(self, message: str, *, row: int | None = None):
        super().__init__(message)
        self.row = row


class LedgerUnavailable(LedgerError):
    """The ledger server cannot be reached, or the connection to it was lost during a call.
    The message says what became of the call: not recorded, or — when the connection was lost
    while committing — unknown; a reserved round stays reserved (held at its sup) until it is
    settled or recovered.  The next call reconnects."""


class CertificateError(OdpError):
    """A certificate is malformed or does not replay under the checker."""


class OutputError(OdpError, OSError):
    """A file odp was asked to write (a certificate and its sidecar) could not be written: the
    path is a directory, its directory is missing or not writable, or the disk is full.
    Nothing is left behind: no partial or temporary file, and a file that was there before is
    unchanged.  Also an :class:`OSError`, so code that caught the raw error still does."""


class FloatBudgetWarning(UserWarning):
    """A float was used as a number odp must take exactly.  A float privacy parameter (ε, δ,
    ρ, a cost or a budget) is rounded up to the shortest decimal not below its binary value
    (0.1 → 0.10000000000000001); this is said once per process.  Any other parameter given as
    a float is taken at its exact binary value.  Pass a string such as "0.1" to mean the decimal
    exactly."""
