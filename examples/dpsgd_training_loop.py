#!/usr/bin/env python3
"""A plain numpy DP-SGD training loop, accounted by odp.dpsgd.Accounting, stopping early.

The loop is yours: numpy logistic regression with Poisson sampling, per-example clipping and
Gaussian noise.  odp only accounts it:

1. ``Accounting(...)`` reserves the run's worst case (all epochs) in a SQLite ledger before the
   first step;
2. ``run.step()`` is called once per noisy step, before its noise is drawn;
3. every fifth epoch (a stop) the loop decides whether to stop from *released values
   only*: the norm of the epoch's mean noisy gradient (never a private validation score);
4. ``run.stop()`` settles the round at the cost of the epochs actually run (Lemma 11 of
   Hartmann et al. 2022), and the ledger and its certificate are verified.

With ``--settlement renyi`` the ledger has a Rényi lane instead, and the run pays each stretch of
five epochs to it before the stretch's first step (``odp.dpsgd.renyi_lane``): nothing is
reserved, ``stop()`` charges nothing more, and no δ is split over the stops.

    python examples/dpsgd_training_loop.py [--seed N] [--dir DIR] [--settlement lemma11|renyi]

With ``--seed`` the run is reproducible (numpy's generator: not for real use); without it the
generator is seeded from the operating system.  Exit status 0 when the ledger and certificate
verify, 1 otherwise.
"""

from __future__ import annotations

import argparse
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import odp
from odp.certs import verify
from odp.dpsgd import Accounting, check_poisson_batches

RECORDS, FEATURES = 4000, 10
SAMPLING_RATE = "1/50"          # Poisson sampling: expected batch 80
NOISE_MULTIPLIER = "1.0"
CLIP = 1.0
EPOCHS = 30                     # at most 30 · 50 = 1500 steps
LEARNING_RATE = 0.5
DELTA = "1e-6"                  # this run's δ
#: the ``odp`` command line, run by this Python
ODP = [sys.executable, "-c", "import sys; from odp.cli import main; sys.exit(main())"]
TOTAL = ("10", "1e-5")          # the ledger's budget (ε, δ)
CHECK_EVERY = 5                 # the stops: every 5 epochs
RENYI_ORDERS = [3, 4, 5, 6, 8, 10]  # the Rényi lane's orders (--settlement renyi)


def make_data(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A synthetic labelled data set (the private data of this example)."""
    w_true = rng.normal(size=FEATURES)
    x = rng.normal(size=(RECORDS, FEATURES)) / np.sqrt(FEATURES)
    y = np.where(rng.random(RECORDS) < 1 / (1 + np.exp(-3 * x @ w_true)), 1.0, -1.0)
    return np.hstack([x, np.ones((RECORDS, 1))]), y


def clipped_gradients(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-example gradients of the logistic loss, each clipped to L2 norm CLIP."""
    margins = y * (x @ w)
    g = (-y / (1 + np.exp(margins)))[:, None] * x
    norms = np.linalg.norm(g, axis=1)
    return g * np.minimum(1.0, CLIP / np.maximum(norms, 1e-12))[:, None]


def train(run: Accounting, x: np.ndarray, y: np.ndarray, rng: np.random.Generator,
          threshold: float, steps_per_epoch: int) -> tuple[np.ndarray, list[int]]:
    """DP-SGD: every step samples each record with probability q, adds N(0, (σC)²) noise to
    the clipped sum and divides by the expected batch size q·n (public)."""
    q, sigma = float(run.schedule.phases[0].sampling_rate), float(NOISE_MULTIPLIER)
    w = np.zeros(x.shape[1])
    sizes: list[int] = []
    epoch: list[np.ndarray] = []
    while run.steps_run < run.max_steps:
        try:
            run.step()                                       # before the step's noise
        except odp.BudgetExceeded:                           # a Rényi lane that cannot pay
            break                                            # the next stretch: stop here
        batch = rng.random(len(y)) < q                       # Poisson sampling
        sizes.append(int(batch.sum()))
        noisy = clipped_gradients(w, x[batch], y[batch]).sum(axis=0) \
            + rng.normal(scale=sigma * CLIP, size=w.size)
        g = noisy / (q * len(y))
        w -= LEARNING_RATE * g
        epoch.append(g)
        if run.steps_run % steps_per_epoch == 0:            # an epoch ends
            if run.at_stop() and float(np.linalg.norm(np.mean(epoch, axis=0))) < threshold:
                break                                        # released values only
            epoch = []
    return w, sizes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=None, help="reproducible (insecure) randomness")
    ap.add_argument("--dir", default=None, help="where to keep the ledger and certificate "
                                                  "(default: a temporary directory)")
    ap.add_argument("--settlement", choices=("lemma11", "renyi"), default="lemma11",
                    help="settle by Lemma 11 in an ODP ledger (default) or pay a Rényi lane")
    args = ap.parse_args(argv)
    renyi = args.settlement == "renyi"
    rng = np.random.default_rng(args.seed if args.seed is not None else secrets.randbits(128))
    x, y = make_data(np.random.default_rng(2024))
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(args.dir or tmp)
        where.mkdir(parents=True, exist_ok=True)
        ledger = where / "training.ledger"
        lanes = [odp.Lane.renyi(TOTAL[0], TOTAL[1], orders=RENYI_ORDERS)] if renyi else None
        # the ledger's rounds hold for add/remove neighbours, DP-SGD's (odp.Neighbours)
        acc = odp.Accountant(epsilon=TOTAL[0], delta=TOTAL[1], ledger=str(ledger), lanes=lanes,
                             neighbours=odp.Neighbours.ADD_REMOVE)
        steps_per_epoch = 50
        route: dict = {} if renyi else {"delta": DELTA, "composition": "buckets"}
        run = Accounting(acc, sampling_rate=SAMPLING_RATE, noise_multiplier=NOISE_MULTIPLIER,
                         max_steps=EPOCHS * steps_per_epoch, stops=CHECK_EVERY * steps_per_epoch,
                         name="numpy logistic regression",
                         params={"records_public_bound": RECORDS, "clip": CLIP}, **route)
        worst, _ = run.reserved
        if renyi:
            print(f"paid to the Renyi lane: steps 1-{run.settlement.paid} (epsilon "
                  f"{float(worst):.4f} at the lane's delta {float(run.delta):.3g}); budget left "
                  f"{acc.remaining}")
        else:
            print(f"reserved: epsilon {float(worst):.4f} (all {EPOCHS} epochs), delta {DELTA}; "
                  f"budget left {acc.remaining}")
        # the noise alone gives an epoch-mean gradient of norm about this (public parameters)
        noise_norm = (float(NOISE_MULTIPLIER) * CLIP * np.sqrt(x.shape[1])
                      / (RECORDS / 50 * np.sqrt(steps_per_epoch)))
        w, sizes = train(run, x, y, rng, 2.0 * noise_norm, steps_per_epoch)
        interval = run.epsilon()
        record = run.stop()
        accuracy = float(np.mean(np.sign(x @ w) == y))
        print(f"stopped after {run.steps_run} steps ({run.steps_run // steps_per_epoch} epochs); "
              f"training accuracy {accuracy:.3f}")
        if renyi:
            paid, used = run.charge_if_stopped()
            print(f"paid in the Renyi lane for {paid} steps in {len(run.settlement.records)} "
                  f"stretches: epsilon {float(used):.4f} at delta {float(run.delta):.3g} (no "
                  f"delta split over the stops); the lane's reading "
                  f"{float(acc.lanes[0].current[0]):.4f}, tight epsilon at least "
                  f"{float(interval.lower):.4f}")
        else:
            print(f"charged epsilon {float(record.charged):.4f} (class {record.label} steps) of "
                  f"the reserved {float(worst):.4f}; the {run.steps_run} steps are "
                  f"({float(interval.upper):.4f}, {DELTA})-DP, tight epsilon at least "
                  f"{float(interval.lower):.4f}")
        sampling = check_poisson_batches(sizes, RECORDS, SAMPLING_RATE)
        print("sampling check:", sampling.statement())
        cert = acc.certificate()
        cert_path, _ = cert.write(where / "training.cert")
        acc.close()
        result = verify(cert.text, cert.sidecar)
        print("certificate:", result.message)
        for line in result.guarantee_lines():
            print("  " + line)
        cli = subprocess.run([*ODP, "ledger", "verify", str(ledger)], capture_output=True,
                             text=True, check=False)
        print("odp ledger verify:", cli.stdout.strip().splitlines()[0] if cli.stdout else
              cli.stderr.strip())
        both = subprocess.run([*ODP, "verify", str(cert_path), "--ledger", str(ledger)],
                              capture_output=True, text=True, check=False)
        print("odp verify --ledger:", both.stdout.strip().splitlines()[0] if both.stdout else
              both.stderr.strip())
        ok = result.ok and cli.returncode == 0 and both.returncode == 0 and bool(sampling)
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
