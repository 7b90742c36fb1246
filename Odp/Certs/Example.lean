/-
Copyright (c) 2025 The odp authors. Released under Apache 2.0.

# Sample run certificate

Certificates of real runs are written by the accountant as `Odp/Certs/Run_<id>.lean` with this
shape: the exported ledger (natural numbers in units of `1/D`) is replayed by the kernel.
Here `D = 10^6`: the budget is `ε_t = 1`, `δ_t = 10^-3`; round 1 declares `sup ℰ = 0.3`, realises
a block of cost `0.1` and spends `δ_1 = 10^-5`; round 2 realises its worst block (`0.3`) and
spends `δ_2 = 2·10^-5`. The remaining budget is `(0.6, 9.7·10^-4)`.

The second part shows what a `mech` row adds (`D = 10^6`, budget `ε_t = 1`): an M_toy round with
`ε = 0.2` that released ⊥ and a user's `DP(0.1)` charge are accepted by `checkCert`; two
forgeries — the toy round relabelled as free (`step 0 0 0`, `blocks 0 0`) and the
`DP(0.1)` charge halved with an invented two-class `blocks` row — are rejected, although their
`blocks` rows pass `blocksOk`. The same forged rows under `MechRow.declared` are accepted: a
declared round's guarantee is the mechanism author's claim, which is why `odp verify` reports such
rounds as declared, not proved.

The last part is Lemma 11 with a COMP other than basic composition (`kindLemma11`: privacy
buckets, the optimal composition, DP-SGD's RDP): the row lists per stop `(k_i, ε^{k_i}, δ^{k_i})`;
the classes must cost the `ε^{k_i}` and the round's `δ` must cover `Σ_i δ^{k_i}` (DP-SGD declares
its target, above the sum). A cheaper class or a `δ` below the sum is rejected.
-/
module

public import Odp.LedgerCore

@[expose] public section

set_option autoImplicit false

namespace Odp.Certs.Example

open Odp.LedgerCore

theorem run_ok :
    replay ⟨1000000, 1000⟩ [⟨300000, 100000, 10⟩, ⟨300000, 300000, 20⟩]
      = some ⟨600000, 970⟩ := by
  decide

/-- A row whose declared DP ε exceeds the remaining budget is rejected. -/
theorem run_rejected : replay ⟨100, 0⟩ [⟨200, 50, 0⟩] = none := by
  decide

/-- M_toy (ε = 0.2) released ⊥, then a `DP(0.1)` charge: accepted, `0.9` left. -/
theorem mech_ok :
    checkCert ⟨1000000, 0⟩
      [⟨⟨200000, 0, 0⟩, some ([200000, 0], 1), none, ⟨kindToy, [200000], []⟩⟩,
       ⟨⟨100000, 100000, 0⟩, some ([100000], 0), none, ⟨kindDp, [], []⟩⟩]
      = some ⟨900000, 0⟩ := by
  decide

/-- The toy round relabelled as free: its `blocks` row passes `blocksOk`, its `mech` row fails. -/
theorem toy_relabelled_free_rejected :
    checkCert ⟨1000000, 0⟩ [⟨⟨0, 0, 0⟩, some ([0, 0], 1), none, ⟨kindToy, [200000], []⟩⟩]
      = none := by
  decide

/-- The `DP(0.1)` charge halved with an invented two-class `blocks` row: rejected. -/
theorem dp_halved_rejected :
    checkCert ⟨1000000, 0⟩ [⟨⟨100000, 50000, 0⟩, some ([100000, 50000], 1), none, ⟨kindDp, [], []⟩⟩]
      = none := by
  decide

/-- The same halved row, declared as a user's own mechanism: its arithmetic passes. -/
theorem dp_halved_declared_accepted :
    checkCert ⟨1000000, 0⟩
      [⟨⟨100000, 50000, 0⟩, some ([100000, 50000], 1), none, MechRow.declared⟩]
      = some ⟨950000, 0⟩ := by
  decide

/-- SVT with `c = 2`, `ε1 = 0.1`, `ε2 = 0.2`, one ⊤ answer: classes `(0.1, 0.2, 0.3)`, charged
`0.2`. A class list that stops at `c' = 1` is rejected. -/
theorem svt_ok :
    checkCert ⟨1000000, 0⟩
      [⟨⟨300000, 200000, 0⟩, some ([100000, 200000, 300000], 1), none,
        ⟨kindSvt, [2, 100000, 200000], []⟩⟩]
      = some ⟨800000, 0⟩ := by
  decide

theorem svt_short_rejected :
    checkCert ⟨1000000, 0⟩
      [⟨⟨200000, 200000, 0⟩, some ([100000, 200000], 1), none,
        ⟨kindSvt, [2, 100000, 200000], []⟩⟩]
      = none := by
  decide

/-- Alg. 3 with stops `(2, 4)`, four steps of `(ε, δ) = (0.1, 10^-6)` (D = 10^6): classes cost
`(0.2, 0.4)` and `δ = 2·10^-6 + 4·10^-6`; stopped after 2 steps. -/
theorem iter_ok :
    checkCert ⟨1000000, 10⟩
      [⟨⟨400000, 200000, 6⟩, some ([200000, 400000], 0), none,
        ⟨kindIter, [2, 4], [⟨4, 100000, 1⟩]⟩⟩]
      = some ⟨800000, 4⟩ := by
  decide

/-- Lemma 11 with another COMP (D = 10^6): stops `10, 20` costing `(0.2, 0.3)`, the prefixes
`(0.2, 3·10^-6)`- and `(0.3, 4·10^-6)`-DP. Round 1 declares `δ = 7·10^-6` (the sum) and stops at
10; round 2 declares `δ = 9·10^-6` (a target above the sum, as DP-SGD does) and runs to 20. -/
theorem lemma11_ok :
    checkCert ⟨1000000, 20⟩
      [⟨⟨300000, 200000, 7⟩, some ([200000, 300000], 0), none,
        ⟨kindLemma11, [], [⟨10, 200000, 3⟩, ⟨20, 300000, 4⟩]⟩⟩,
       ⟨⟨300000, 300000, 9⟩, some ([200000, 300000], 1), none,
        ⟨kindLemma11, [], [⟨10, 200000, 3⟩, ⟨20, 300000, 4⟩]⟩⟩]
      = some ⟨500000, 4⟩ := by
  decide

/-- The same round declaring `δ = 6·10^-6`, below `Σ_i δ^{k_i}`: rejected. -/
theorem lemma11_delta_short_rejected :
    checkCert ⟨1000000, 20⟩
      [⟨⟨300000, 200000, 6⟩, some ([200000, 300000], 0), none,
        ⟨kindLemma11, [], [⟨10, 200000, 3⟩, ⟨20, 300000, 4⟩]⟩⟩]
      = none := by
  decide

/-- The same round with its first class relabelled cheaper (`0.1` instead of `ε^{10} = 0.2`): its
`blocks` row passes `blocksOk`, its `mech` row fails. -/
theorem lemma11_cheaper_class_rejected :
    checkCert ⟨1000000, 20⟩
      [⟨⟨300000, 100000, 7⟩, some ([100000, 300000], 0), none,
        ⟨kindLemma11, [], [⟨10, 200000, 3⟩, ⟨20, 300000, 4⟩]⟩⟩]
      = none := by
  decide

end Odp.Certs.Example
