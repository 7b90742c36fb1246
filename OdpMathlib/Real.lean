/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# The machine-checked core at the real numbers (Mathlib layer)

`Odp.Core` proves Definitions 1, 2 and 5, Lemmas 3, 4, 6, 20, Theorem 7 and the ledger's
soundness for Theorem 7 over any `Odp.Core.ExpField`. This file makes ℝ with `Real.exp` one, so
that every theorem of the core applies verbatim to real probabilities and `e^x` — once this file
is compiled, which only the external workflow does.

This file needs Mathlib: it belongs to the external elan/Mathlib workflow and is **not**
compiled by our CI (see `docs/lean.md`). The Mathlib names it uses are recorded in
`Odp/VERIFICATION_LOG.md`, with the fallbacks to apply if one differs at the pin.
-/
import Mathlib
import Odp.Core.Ledger

set_option autoImplicit false

noncomputable section

namespace Odp

/-- ℝ with `Real.exp` is an ordered field with an exponential. The parent instances are
Mathlib's: `Field.toGrindField`, the `Lean.Grind.OrderedRing` instance of a strict ordered
semiring, and the `Std.IsLinearOrder` / `Std.LawfulOrderLT` instances of a linear order. -/
instance realExpField : Odp.Core.ExpField ℝ where
  toField := inferInstance
  toLE := inferInstance
  toLT := inferInstance
  toIsLinearOrder := inferInstance
  toLawfulOrderLT := inferInstance
  toOrderedRing := inferInstance
  exp := Real.exp
  exp_add := Real.exp_add
  exp_zero := Real.exp_zero
  exp_pos := Real.exp_pos
  exp_le_exp := fun _ _ h => Real.exp_le_exp.mpr h

/-- **Theorem 7** over ℝ (the core's `odp_composition` at `realExpField`): for every valid
adaptive adversary with finite outputs and budget `(ε_t, δ_t)`, and every set of views,
`Pr(V⁰ ∈ 𝒱) ≤ e^{ε_t} Pr(V¹ ∈ 𝒱) + δ_t`. -/
theorem odp_composition_real {X O : Type} [Odp.Core.Enum O] (Nbr : X → X → Prop)
    (A : Odp.Core.Adv X O ℝ) (ε δ : ℝ) (hε : 0 ≤ ε) (hδ : 0 ≤ δ) (hv : A.Valid Nbr ε δ)
    (V : List O → Bool) : A.prob false V ≤ Real.exp ε * A.prob true V + δ :=
  Odp.Core.odp_composition Nbr A ε δ hε hδ hv V

end Odp
