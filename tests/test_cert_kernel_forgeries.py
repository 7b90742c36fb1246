"""Two forgeries against the Lean kernel (``odp verify --kernel``'s check):
a real run's certificate with an M_toy round relabelled as free, or a DP(0.1) charge halved
with an invented two-class ``blocks`` row, is rejected by the kernel deciding
``Odp.LedgerCore.checkCert`` — the step that fails is named (one step per chunk).

Each check compiles one Lean file with the real toolchain (about a minute); without it the
tests are skipped, unless ``ODP_REQUIRE_LEAN=1``."""

from __future__ import annotations

import pytest

from odp.certs.format import parse
from odp.certs.kernel import check_kernel, lean_certificate

from lean_support import replayed_final, toolchain  # noqa: F401  (fixture)
from test_cert_mechanisms import _forge, _real_run

# The Lean toolchain (tests/conftest.py marks every test using it so; explicit here too): these
# run with `python -m pytest -m slow`.  By default the Python checker's verdict on the same two
# forgeries (test_cert_mechanisms.py) and the generated Lean text (test_certificates.py) run.
pytestmark = [pytest.mark.slow, pytest.mark.lean]


@pytest.mark.parametrize("kind", ["toy", "dp"])
def test_the_kernel_rejects_the_forgery_at_its_round(toolchain, kind):  # noqa: F811
    cert = _real_run().certificate()
    forged, n = _forge(cert.text, kind)
    source = lean_certificate(parse(forged), replayed_final(forged), chunk=1)
    assert "⟨kindToy, [200000], []⟩" in source and "⟨kindDp, [], []⟩" in source
    result = check_kernel(forged, replayed_final(forged), chunk=1)
    assert not result.ok, result.message
    assert "rejected" in result.message and f"chunk{n - 1}_ok" in result.message
