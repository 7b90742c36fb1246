"""Write your own mechanism and run it through an odp accountant.

    python examples/own_mechanism.py

Walks through docs/mechanisms.md, "Write your own mechanism": declare a guarantee, release with
randomness from the accountant's ``rng``, let the accountant classify the release; then
``reserve()``/``settle`` and ``charge()`` for work done outside ``run``.  Each round's record is
printed.  The guarantees below are *declared*: odp checks the ledger arithmetic, not whether a
declared guarantee is true — that is the mechanism author's lemma.
"""

from __future__ import annotations

from fractions import Fraction

import odp
from odp.budget import parse_epsilon
from odp.samplers import RandomSource, bernoulli, discrete_laplace


class NoisyCount(odp.Mechanism):
    """The number of records with ``predicate(record)``, plus discrete Laplace noise
    P(z) ∝ exp(−ε|z|), clamped to [0, max_count].  A count changes by at most 1 when one record
    is added or removed, so this is ε-DP (Laplace mechanism); clamping is post-processing."""

    name = "noisy_count"

    def __init__(self, predicate, epsilon, max_count=10**6):
        self.predicate = predicate
        self.epsilon = parse_epsilon(epsilon)  # exact: "0.25" is 1/4
        self.max_count = max_count

    @property
    def guarantee(self):
        return odp.DP(self.epsilon)  # declared before any data is seen; never data-dependent

    def params(self):
        return {"epsilon": str(self.epsilon), "max_count": self.max_count}  # JSON, recorded

    def release(self, data, rng):
        count = sum(1 for record in data if self.predicate(record))
        noisy = count + discrete_laplace(1 / self.epsilon, rng)  # every random bit from rng
        return min(max(noisy, 0), self.max_count)


class MaybeCount(NoisyCount):
    """With probability 1/2 — a coin that never looks at the data — answer ⊥ (no answer)
    instead.  ⊥ is exactly as likely on every dataset, so releasing it costs nothing; a count
    costs ε.  That is an ODP guarantee with two classes (Hartmann et al. 2022, Def. 2; its
    M_toy)."""

    name = "maybe_count"

    @property
    def guarantee(self):
        return odp.ODP(lambda release: "bottom" if release is odp.BOTTOM else "count",
                       {"bottom": 0, "count": self.epsilon})

    def release(self, data, rng):
        if bernoulli(Fraction(1, 2), rng):
            return odp.BOTTOM
        return super().release(data, rng)


#: The budget covers every release below in the worst case -- 0.25 for the count, 0.25 for each
#: of the three maybe-counts if all three coins say "count", 0.1 and 0.05 by hand: 1.15 -- so
#: the run never depends on its coins.  A smaller budget is refused *before* the round that
#: would overspend it (BudgetExceeded: nothing drawn, nothing charged), which is how ODP saves
#: budget: most runs spend less than the worst case (see "remaining" at the end).
BUDGET = "1.25"


def main(rng: RandomSource | None = None) -> None:
    """Run the walk-through; ``rng`` is the accountant's randomness (default: the secure
    CSPRNG; ``odp.SeededRandom(seed)`` makes a run reproducible, and insecure)."""
    ages = [23, 41, 37, 52, 29, 61, 44]
    acc = odp.Accountant(epsilon=BUDGET, rng=rng)  # in memory; ledger="x.db" keeps it on disk

    over_40 = NoisyCount(lambda age: age > 40, epsilon="0.25")
    print("release:", acc.run(over_40, ages), "|", acc.last_round.describe())

    maybe = MaybeCount(lambda age: age > 40, epsilon="0.25")
    for _ in range(3):
        release = acc.run(maybe, ages)  # ⊥ is charged 0, a count 0.25
        print("release:", release, "|", acc.last_round.describe())

    # Work done outside run(): reserve first (the worst case is held), then draw, then settle.
    with acc.reserve(odp.DP("0.1"), mechanism="by_hand", params={"what": "count over 60"}) as r:
        count = sum(1 for age in ages if age > 60)  # sensitivity 1: scale 10 gives ε = 1/10
        release = count + discrete_laplace(Fraction(10), acc.rng)
        r.settle(release)  # classify and charge; leaving the block unsettled charges the sup
    print("release:", release, "|", acc.last_round.describe())

    # A release made elsewhere, accounted after the fact (atomic; refused means unpublishable).
    acc.charge(odp.DP("0.05"), mechanism="elsewhere")
    print("charged:", acc.last_round.describe())

    # What the accountant refuses before anything is reserved: too much, or a broken release.
    try:
        acc.run(NoisyCount(lambda age: True, epsilon="5"), ages)
    except odp.BudgetExceeded as exc:
        print("refused:", str(exc).split(";")[0])
    try:
        acc.run(odp.DP("0.1"), ages)  # a guarantee is not a mechanism
    except odp.InvalidParameter as exc:
        print("refused:", str(exc).split(";")[0])

    print("remaining:", acc.remaining)


if __name__ == "__main__":
    main()
