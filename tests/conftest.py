"""Shared pytest configuration.

mpmath's working precision is global state.  Tests that compute high-precision references set
it; without isolation the precision a test runs at would depend on which tests ran before it.
Every test therefore starts at its module's ``MPMATH_DPS`` (default 50 significant digits), may
change it freely, and has it restored afterwards.
"""

from __future__ import annotations

import pytest

DEFAULT_MPMATH_DPS = 50


@pytest.fixture(autouse=True)
def _isolated_mpmath_precision(request):
    try:
        import mpmath
    except ImportError:  # pragma: no cover - mpmath is in the test extra
        yield
        return
    saved = mpmath.mp.dps
    mpmath.mp.dps = getattr(request.module, "MPMATH_DPS", DEFAULT_MPMATH_DPS)
    try:
        yield
    finally:
        mpmath.mp.dps = saved
