"""OpenDP measurements in an odp ledger: a Laplace count and a Gaussian count, certified.

    pip install -e ".[opendp]"          # OpenDP (tested with 0.16.0)
    python examples/opendp_laplace.py   # or: python examples/opendp_laplace.py LEDGER

See docs/mechanisms.md, "OpenDP measurements".  The guarantee of each round is what the
measurement's privacy map states (declared to odp, rounded up to a short decimal); the noise is
drawn by OpenDP with its own random number generator.  The ledger is then shown, certified and
the certificate verified, as the odp commands would (``odp ledger show``, ``odp certify``,
``odp verify``).
"""

from __future__ import annotations

import os
import sys
import tempfile

import opendp.prelude as dp

import odp
from odp.cli import main as odp_command

dp.enable_features("contrib")  # OpenDP's constructors below need it (OpenDP's rule)


def main() -> None:
    ledger = sys.argv[1] if len(sys.argv) > 1 else os.path.join(tempfile.mkdtemp(), "opendp.db")
    ages = [23, 41, 37, 52, 29, 61, 44]
    count = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=int)), dp.symmetric_distance())

    with odp.Accountant(epsilon="1", delta="1e-6", ledger=ledger) as acc:
        # Under symmetric distance, replacing one record is d_in = 2: ε = 2 / scale = 0.5.
        laplace = odp.from_opendp(count >> dp.m.then_laplace(scale=4.0), d_in=2)
        print("Laplace count:", laplace.guarantee)
        print("  release:", acc.run(laplace, ages))

        # A zCDP measurement: ρ = 2² / (2·20²) = 0.005, converted to (ε, δ) at δ = 1e-6.
        gauss = odp.from_opendp(count >> dp.m.then_gaussian(scale=20.0), d_in=2, delta="1e-6")
        print("Gaussian count:", gauss.guarantee)
        print("  release:", acc.run(gauss, ages))
        print("remaining:", acc.remaining)

    print()
    odp_command(["ledger", "show", ledger])
    cert = ledger + ".cert"
    print()
    odp_command(["certify", ledger, "-o", cert])
    odp_command(["verify", cert])


if __name__ == "__main__":
    main()
