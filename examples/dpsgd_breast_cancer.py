#!/usr/bin/env python3
"""DP-SGD on scikit-learn's bundled Wisconsin breast-cancer data, charged by ODP.

Trains logistic regression and a small MLP (one hidden layer) with :class:`odp.mechanisms.DPSGD`
— Poisson sampling and exact discrete Gaussian noise drawn from the accountant's CSPRNG — through
one :class:`odp.Accountant`, stopping at the end of an epoch once the epoch's mean noisy gradient
is small (Hartmann et al. 2022, Sec. 5, Lemma 11 with RDP as COMP).  For each model it prints the
test accuracy, the ε charged for the epochs it ran and the worst case (all epochs), which plain DP
accounting would charge.

Privacy unit: one patient record of the training split (add/remove neighbours; the split is a
fixed public permutation).  The features are scaled to [-1, 1] with the per-feature ranges
*published in the data set's description* (``DESCR``), public information: nothing is computed
from the records outside DP-SGD.  The test split is only used to report accuracy.

    python examples/dpsgd_breast_cancer.py                 # both models, secure randomness
    python examples/dpsgd_breast_cancer.py --model logistic --seed 1   # reproducible (INSECURE)

Bad parameters (e.g. ``--sampling-rate 2``) print one line and exit with status 2.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from typing import Any

import numpy as np

import odp
from odp.budget import format_fraction
from odp.mechanisms import DPSGD, LogisticRegressionModel, MLPModel

#: total budget of the session (both models); δ is shared by the rounds
TOTAL_EPSILON = "10"
TOTAL_DELTA = "1e-5"


def published_ranges(descr: str, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The (min, max) of each feature from the "Summary Statistics" table of ``DESCR``."""
    rows = re.findall(r"^[a-z ()]+:\s+([0-9.]+)\s+([0-9.]+)\s*$", descr, flags=re.MULTILINE)
    if len(rows) != count:
        raise SystemExit(f"error: expected {count} published feature ranges, found {len(rows)}")
    lo, hi = zip(*rows)
    return np.array(lo, dtype=float), np.array(hi, dtype=float)


def load() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer()
    lo, hi = published_ranges(bunch.DESCR, bunch.data.shape[1])
    x = np.clip((bunch.data - (lo + hi) / 2) / ((hi - lo) / 2), -1, 1)
    y = np.where(bunch.target == 0, 1.0, -1.0)  # +1 malignant
    perm = np.random.RandomState(2020).permutation(len(y))  # fixed, public split
    cut = int(round(0.7 * len(y)))
    return x[perm[:cut]], y[perm[:cut]], x[perm[cut:]], y[perm[cut:]]


def build(model: Any, args: argparse.Namespace, n: int) -> DPSGD:
    """The DP-SGD round for ``model`` (every parameter checked here, before anything runs)."""
    settings = dict(n=n, sampling_rate=args.sampling_rate,
                    noise_multiplier=args.noise_multiplier, epochs=args.epochs,
                    check_every=args.check_every, delta=args.delta, clip=args.clip,
                    learning_rate=args.learning_rate)
    # stop once the epoch-mean noisy gradient is within 50% of what the noise alone gives
    noise = DPSGD(model, **settings).noise_norm()
    return DPSGD(model, **settings, stop_threshold=1.5 * noise)


def train(acc: odp.Accountant, mech: DPSGD, data: tuple[np.ndarray, ...]) -> None:
    x_train, y_train, x_test, y_test = data
    start = time.perf_counter()
    fit = acc.run(mech, (x_train, y_train))
    seconds = time.perf_counter() - start
    record = acc.last_round
    assert record is not None
    worst = mech.guarantee.sup_epsilon
    print(f"{mech.model.name:>8}: {mech.num_params} parameters, q = {mech.q}, "
          f"sigma = {mech.sigma}, {mech.steps_per_epoch} steps per epoch")
    print(f"          ran {fit.epochs} of {mech.epochs} epochs ({len(fit)} steps, "
          f"{seconds:.1f} s); test accuracy {fit.accuracy(x_test, y_test):.1%}")
    print(f"          epsilon charged {float(record.charged):.4f} (ODP, the epochs it ran) of a "
          f"worst case {float(worst):.4f} (all {mech.epochs} epochs); "
          f"delta {format_fraction(record.delta)}")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="both", help="logistic, mlp or both")
    parser.add_argument("--epochs", default="20")
    parser.add_argument("--check-every", default="2", help="epochs between stopping points")
    parser.add_argument("--sampling-rate", default="1/10")
    parser.add_argument("--noise-multiplier", default="2")
    parser.add_argument("--delta", default="4e-6", help="the delta of each model's round")
    parser.add_argument("--clip", default="1")
    parser.add_argument("--learning-rate", default="1")
    parser.add_argument("--hidden", default="4", help="hidden units of the MLP")
    parser.add_argument("--seed", default=None, help="INSECURE reproducible randomness")
    return parser.parse_args(argv)


def _int(text: str, name: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise odp.InvalidParameter(f"--{name} must be an integer, got {text!r}") from None


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    try:
        args.epochs = _int(args.epochs, "epochs")
        args.check_every = _int(args.check_every, "check-every")
        hidden = _int(args.hidden, "hidden")
        if args.model not in ("logistic", "mlp", "both"):
            raise odp.InvalidParameter(f"--model must be logistic, mlp or both, got {args.model!r}")
        data = load()
        dim = data[0].shape[1]
        models: list[Any] = []
        if args.model in ("logistic", "both"):
            models.append(LogisticRegressionModel(dim))
        if args.model in ("mlp", "both"):
            models.append(MLPModel(dim, hidden))
        mechanisms = [build(model, args, len(data[1])) for model in models]
        rng = (odp.SeededRandom(_int(args.seed, "seed")) if args.seed is not None
               else odp.SecureRandom())
        print(f"breast cancer (scikit-learn): {len(data[1])} training and {len(data[3])} test "
              f"records; budget epsilon = {TOTAL_EPSILON}, delta = {TOTAL_DELTA}; randomness: "
              f"{'seeded (INSECURE)' if args.seed is not None else 'secure'}")
        # one neighbouring relation per accountant: DP-SGD's add/remove (odp.Neighbours)
        with odp.Accountant(epsilon=TOTAL_EPSILON, delta=TOTAL_DELTA, rng=rng,
                            neighbours=odp.Neighbours.ADD_REMOVE) as acc:
            for mech in mechanisms:
                train(acc, mech, data)
            left = acc.remaining
            print(f"remaining budget: epsilon {float(left.epsilon):.4f}, delta "
                  f"{format_fraction(left.delta)}")
    except odp.OdpError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
