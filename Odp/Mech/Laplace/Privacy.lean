/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# The grid Laplace mechanism (clamped) is ε-DP, and Lemma 3 for it

The grid, the window and the clamp are in `Odp/Mech/Common/Grid.lean`: odp releases
`clamp(n(x) + Z, lo, hi)` with `|n(x) − n(x')| ≤ m` for neighbours (`odp.mechanisms.noise`).

**Laplace** (`laplace_dp`, `laplace_odp`; odp's `LaplaceMechanism`). `Z` discrete Laplace of
scale `m/ε` grid units. The mechanism's law is written out — `clampedLaplace (ε/m)`
(`Odp/Mech/Laplace/Law.lean`): closed-form masses on the window, proved to sum to 1 — so **no
noise hypothesis** is taken. For `ε ≥ 0` it is ε-DP (Hartmann et al. 2022, Definition 1, δ = 0):
moving the centre by `s`, `|s| ≤ m`, costs at most `e^{|s|·ε/m} ≤ e^ε` at every output. By
Lemma 3 (`Odp.Core.odp_of_dp`) it is (𝒫, ℰ ≡ ε, 0)-ODP for every partition 𝒫.

Narrower than the paper: the noise is the discrete Laplace on the grid and the release is
clamped to a window — the mechanism odp runs. The neighbour relation is any relation `Nbr` with
`|n(x) − n(x')| ≤ m` on neighbours; `m ≥ 1` (odp: `m = ⌈Δ/g⌉ ≥ 1`).

The rest of the Laplace mechanism's home: its law in `Law.lean`, its certificate link in
`Link.lean`; M_toy (`Odp/Mech/Toy/`) puts a fair coin in front of it.
-/
module

public import Odp.Mech.Common.Grid
public import Odp.Mech.Laplace.Law

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core
open Odp.Core.ExpField

noncomputable section

variable {R : Type} [ExpField R] {X O : Type} [Enum O] [DecidableEq O]

/-! ### Laplace -/

/-- **The grid Laplace mechanism, clamped** (`odp.mechanisms.noise.LaplaceMechanism` with a
window): `x ↦ clamp(n(x) + Z, lo, hi)`, `Z` discrete Laplace of scale `m/ε` grid units — its law
written out (`clampedLaplace (ε/m)`, `Odp/Mech/Laplace/Law.lean`: closed-form masses, total
1), not a hypothesis. -/
def laplaceMech (m : Nat) (ε : R) (hε : 0 ≤ ε) (n : X → Int) (lo hi : Int) (hlh : lo ≤ hi) :
    Mechanism X (Window lo hi) R :=
  fun x => clampedLaplace (ε / natR m) (rate_nonneg hε m) lo hi hlh (n x)

/-- **The grid Laplace mechanism is ε-DP** (Def. 1, δ = 0), for `ε ≥ 0`, with no hypothesis
about the noise: its law is `clampedLaplace`, and moving the centre by at most `m` costs at most
`e^{m·ε/m} = e^ε` at every output (`clampedLaplace_shift`). -/
theorem laplace_dp (Nbr : X → X → Prop) (m : Nat) (hm : 0 < m) (ε : R) (hε : 0 ≤ ε)
    (n : X → Int) (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int)
    (hlh : lo ≤ hi) :
    DP Nbr (laplaceMech m ε hε n lo hi hlh) ε 0 := by
  apply dp_of_pointwise
  intro x x' hx c
  have h := clampedLaplace_shift (rate_nonneg hε m) lo hi hlh (n x) (n x') m
    (by have := hn x x' hx; omega) c
  rw [natR_mul_rate hm] at h
  exact h

/-- **Lemma 3 for the grid Laplace mechanism**: (𝒫, ℰ ≡ ε, 0)-ODP for every partition `κ`. -/
theorem laplace_odp {K : Type} [Enum K] [DecidableEq K] (Nbr : X → X → Prop) (m : Nat)
    (hm : 0 < m) (ε : R) (hε : 0 ≤ ε) (n : X → Int)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
    (κ : Window lo hi → K) :
    ODP Nbr (laplaceMech m ε hε n lo hi hlh) κ (fun _ => ε) 0 :=
  odp_of_dp Nbr _ ε 0 (laplace_dp Nbr m hm ε hε n hn lo hi hlh) κ

end

end Odp.Mech
