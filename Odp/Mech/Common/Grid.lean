/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# The grid and its window: the clamp, grid mechanisms from noise shifts, the Laplace rate

odp releases a real query `f` with sensitivity Δ on the grid `g·ℤ` (`odp.mechanisms.noise`):
the query value in grid units is `n(x) = ⌊f(x)/g + 1/2⌋`, with `|n(x) − n(x')| ≤ m = ⌈Δ/g⌉` for
neighbours, integer noise `Z` is added, and the release is clamped to a declared window
`[lo, hi]` (in grid units) so that every output space is finite: `clamp(n(x) + Z, lo, hi)`. The
release `g·v` is a data-independent relabelling of the grid value `v`, so the mechanisms output
`v` itself (`Window lo hi = {v ∈ ℤ | lo ≤ v ≤ hi}`, in `Odp/Mech/Common/Enum.lean`).

Shared by the grid mechanisms (`Odp/Mech/Laplace/`, `Odp/Mech/Gaussian/`, `Odp/Mech/Toy/`) and
odp's `M_IQR` (`Odp/Mech/PTR/IQR.lean`):

* `clamp lo hi h z = min(max(z, lo), hi)` as an element of the window;
* `grid_dp_of_shift`: if every shift `|d| ≤ m` of a noise (seen as an expectation, `Expect`) is
  (ε, δ)-bounded on events, then `x ↦ out (n x + Z)` is (ε, δ)-DP for any map `out : ℤ → O`
  into a finite type (the clamp is the instance odp uses);
* the rate `ε/m` of the grid Laplace noise of scale `m/ε`: `rate_nonneg`, `natR_mul_rate`.

Nothing here is a hypothesis.
-/
module

public import Odp.Mech.Common.Basic

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core
open Odp.Core.ExpField

noncomputable section

/-! ### The window `[lo, hi]` and the clamp -/

-- The window `Window lo hi` and its `Enum` instance are in `Odp/Mech/Common/Enum.lean`.

/-- `clamp(z, lo, hi) = min(max(z, lo), hi)` as an element of the window. -/
def clamp (lo hi : Int) (h : lo ≤ hi) (z : Int) : Window lo hi :=
  ⟨if z < lo then lo else if hi < z then hi else z, by
    by_cases h1 : z < lo
    · rw [if_pos h1]; omega
    · rw [if_neg h1]
      by_cases h2 : hi < z
      · rw [if_pos h2]; omega
      · rw [if_neg h2]; omega⟩

variable {R : Type} [ExpField R] {X O : Type} [Enum O] [DecidableEq O]

/-! ### A grid mechanism is DP when every noise shift up to `m` is -/

/-- If every shift `|d| ≤ m` of the noise is (ε, δ)-bounded on events, then `x ↦ out (n x + Z)`
is (ε, δ)-DP for any map `out` into a finite type and any `n` with `|n x − n x'| ≤ m` on
neighbours. -/
theorem grid_dp_of_shift (N : Expect R) (Nbr : X → X → Prop) (n : X → Int) (m : Nat)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (out : Int → O) (ε δ : R)
    (hshift : ∀ d : Int, -(m : Int) ≤ d → d ≤ (m : Int) → ∀ S : Int → Bool,
      N.E (fun z => ind S (z + d)) ≤ exp ε * N.E (ind S) + δ) :
    DP Nbr (fun x => N.lawOf out (n x)) ε δ := by
  intro x x' hx S
  rw [N.Pr_lawOf, N.Pr_lawOf]
  have hxx := hn x x' hx
  have h1 := hshift (n x - n x') (by omega) (by omega) (fun z => S (out (n x' + z)))
  have h2 : N.E (fun z => ind (fun w => S (out w)) (n x + z))
      = N.E (fun z => ind (fun z => S (out (n x' + z))) (z + (n x - n x'))) := by
    apply Expect.E_congr
    intro z
    unfold ind
    have : n x + z = n x' + (z + (n x - n x')) := by omega
    rw [this]
  have h3 : N.E (fun z => ind (fun w => S (out w)) (n x' + z))
      = N.E (ind (fun z => S (out (n x' + z)))) := rfl
  rw [h2, h3]
  exact h1

/-! ### The rate of the grid Laplace noise -/

/-- The rate `ε/m ≥ 0` of the grid Laplace noise (scale `m/ε` grid units). -/
theorem rate_nonneg {ε : R} (hε : 0 ≤ ε) (m : Nat) : 0 ≤ ε / natR m := by
  rw [Lean.Grind.Field.div_eq_mul_inv]
  cases m with
  | zero => rw [natR_zero, Lean.Grind.Field.inv_zero]; grind
  | succ k => exact mul_nonneg' hε (Std.le_of_lt (inv_pos' (natR_pos (Nat.succ_pos k))))

theorem natR_mul_rate {m : Nat} (hm : 0 < m) (ε : R) : natR m * (ε / natR m) = ε := by
  have h := natR_pos (R := R) hm
  have hi : natR m * (natR m : R)⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel (by grind)
  rw [Lean.Grind.Field.div_eq_mul_inv]
  generalize (natR m : R)⁻¹ = i at hi
  grind

end

end Odp.Mech
