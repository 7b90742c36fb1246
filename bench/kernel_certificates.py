"""Time `odp verify --kernel` (odp.certs.kernel.check_kernel) on real run certificates.

    python bench/kernel_certificates.py [--sizes 100,1000,10000] [--chunk 2000]

Each certificate is an accountant run of alternating M_toy rounds (an ODP refund with a blocks
row when it answers ⊥) and DP charges, budget large enough for every round. Prints, per size,
the Lean kernel's wall time (one Lean process, start-up included), the number of chunks, and the
machine's load average. The toolchain download (first use) is not timed.
"""

from __future__ import annotations

import argparse
import os
import time
from fractions import Fraction

import odp
from odp import lean_toolchain as lt
from odp.certs.kernel import check_kernel


def certificate(n: int) -> tuple[str, tuple[int, int]]:
    acc = odp.Accountant(Fraction(n, 10), Fraction(n, 10**6), rng=odp.SeededRandom(n))
    for i in range(n):
        if i % 2:
            acc.charge(odp.DP("0.05", "1e-7"))
        else:
            acc.run(odp.ToyMechanism(len, epsilon="0.09"), [1, 2, 3])
    cert = acc.certificate()
    final = cert.sidecar["expected_final"]
    return cert.text, (final["eps"], final["delta"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,1000,10000")
    ap.add_argument("--chunk", type=int, default=None)
    args = ap.parse_args()
    lt.ensure_toolchain()
    print(f"Lean {lt.LEAN_VERSION} (WebAssembly), {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}")
    for n in (int(x) for x in args.sizes.split(",")):
        text, final = certificate(n)
        t0 = time.monotonic()
        res = check_kernel(text, final, chunk=args.chunk)
        wall = time.monotonic() - t0
        print(f"{n:>6} transitions: {'accepted' if res.ok else 'REJECTED'} in {wall:6.1f} s "
              f"({res.chunks} chunk(s); load {os.getloadavg()[0]:.1f})", flush=True)
        if not res.ok:
            print("   ", res.message)


if __name__ == "__main__":
    main()
