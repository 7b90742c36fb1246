/-
Copyright (c) 2025 The odp authors. Released under Apache 2.0.

# Sample run certificate

Certificates of real runs are written by the accountant as `Odp/Certs/Run_<id>.lean` with this
shape: the exported ledger (natural numbers in units of `1/D`) is replayed by the kernel.
Here `D = 10^6`: the budget is `ε_t = 1`, `δ_t = 10^-3`; round 1 declares `sup ℰ = 0.3`, realises
a block of cost `0.1` and spends `δ_1 = 10^-5`; round 2 realises its worst block (`0.3`) and
spends `δ_2 = 2·10^-5`. The remaining budget is `(0.6, 9.7·10^-4)`.
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

end Odp.Certs.Example
