/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# TRUST BOUNDARY of the iterative mechanisms (paper 002, Sec. 5)

**This file is part of the trust boundary.** The theorems about odp's iterative mechanisms
(`Odp/Mech/IterComposition.lean`, `Odp/Mech/Iterative.lean`) are proved from the hypotheses
defined here and from nothing else. Each hypothesis is a `Prop`-valued definition that the
theorems take as an *argument* (never an `axiom`): a theorem says "if the hypothesis holds, the
guarantee holds". Lean does not check that odp's real noise satisfies them; for each, the text
says which real distribution or computation satisfies it and why (an argument on paper, not a
Lean proof, because the real distributions have infinite support and need infinite sums).

## The hypotheses

* **`StepsDP Nbr M eps dl`** — step `k` of Alg. 3 is `(ε_k, δ_k)`-DP (Definition 1) for every
  released history `(s_1, …, s_{k−1})`, `k = 1 … |eps|`. This is Lemma 11's and Sec. 5.2's
  premise "`M_k` is `(ε_k, δ_k)`-DP", and what an `odp.composition.StepSpec(ε_k, δ_k)` declares.
  For a user's `IterativeMechanism` it is the user's declaration (odp cannot check it). For
  `NoisyGradientDescent` it is *proved* (`Odp.Mech.noisyStep_dp`, `Iterative.lean`) from the two
  hypotheses below, with `δ_k = 0`.
* **`PrefixDP Nbr M ks epsK delK`** — Lemma 11's COMP hypothesis: the prefix mechanism
  `M^{k_i} = (M_1, …, M_{k_i})` (all `k_i` steps, adaptively) is `(ε^{k_i}, δ^{k_i})`-DP for every
  stop `i`. With basic composition it is *proved* from `StepsDP`
  (`Odp.Mech.prefixDP_basic`, `IterComposition.lean`). With odp's other COMP rules — privacy
  buckets (`odp.composition.BucketsComposition`, paper 003) on the steps' worst-case pairs, or the
  optimal composition of Kairouz–Oh–Viswanath / Murtagh–Vadhan (the `approximate_dp` worst case)
  — `δ^{k_i}` is a number computed by tested Python code (`odp.buckets.composition_delta_upper`),
  and `PrefixDP` with those numbers is the hypothesis; the general Lemma 11 (`Odp.Mech.lemma11`)
  then gives the ODP guarantee.
* **`ShiftDominated N r`** — the noise on one integer coordinate: `N u` is the distribution of
  the released value (in a finite window `C`) when the exact value is `u ∈ ℤ`, and a shift of the
  centre by `s` multiplies any output's probability by at most `e^{|s| r}`:
  `Pr(N u = c) ≤ e^{|u − u'| r} Pr(N u' = c)`.
  *Satisfied by:* the discrete Laplace distribution of scale `b` (pmf `p(z) ∝ e^{−|z|/b}` on `ℤ`,
  `odp.samplers.discrete_laplace`) added to `u`, with `r = 1/b`:
  `p(c − u) ≤ e^{|u − u'|/b} p(c − u')`
  by the triangle inequality. Clamping `u + Z` to a window `[lo, hi]` keeps it: an end point's mass
  is a tail sum `Σ_{z ≤ lo − u} p(z)`, and re-indexing the sum by the shift bounds it term by term
  by `e^{|u − u'|/b}` times the other tail. In `NoisyGradientDescent` the scale is `m/ε_k`, so
  `r = ε_k/m`.
* **`L1Sensitive Nbr d g m`** — not a noise hypothesis but the one fact about the gradient
  computation that the noise argument needs: for every released history, the integer vectors
  `g h x, g h x' ∈ ℤ^d` (the gridded mean gradients at the weights computed from the history) of
  neighbouring databases differ by at most `m` in L1 norm.
  *Satisfied by:* `NoisyGradientDescent.grid_gradient` with `m = NoisyGradientDescent.units`, by
  the floating-point analysis in the docstring of `python/odp/mechanisms/iterative.py` (per-record
  clipping verified in floats, `math.fsum` column sums, rounding to the grid): argued and tested in
  Python, not checked by Lean (Lean does not model IEEE floats here).

## What is narrower than the real mechanism (said, not hidden)

* The model needs each step's release in a **finite** type `W` (for `NoisyGradientDescent`,
  `Vec C d` with a finite window `C` per coordinate). `python/odp/mechanisms/iterative.py` at this
  commit releases the unclamped `u + Z ∈ ℤ^d` (scaled to floats); the theorems cover that release
  once it is clamped to a declared window (clamping each coordinate keeps `ShiftDominated`, above).
  The unclamped, countable output space is the limit of growing windows; that limit is not
  formalised.

## Non-vacuity

Each hypothesis is satisfiable over every `ExpField` (so the theorems are not vacuous):
`stepsDP_const` (steps that ignore the data, any `ε_k, δ_k ≥ 0`), `shiftDominated_rr` (randomised
response on the parity of the centre, a non-constant kernel with `r ≥ 0`), `l1Sensitive_id` (the
identity query on `ℤ` with `|x − x'| ≤ 1`, `m = 1`), and `PrefixDP` from `StepsDP` by basic
composition (`Odp.Mech.prefixDP_basic`).
-/
module

public import Odp.Mech.IterModel

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech.Iter

open Odp.Core Odp.Core.ExpField

noncomputable section

variable {R X W : Type} [ExpField R] [Enum W]

/-! ### The hypotheses -/

/-- **Hypothesis (steps).** Step `k` (history length `k − 1`) is `(ε_k, δ_k)`-DP for every
released history, `k = 1 … |eps|`; `eps = [ε_1, …]`, `dl = [δ_1, …]`. -/
def StepsDP (Nbr : X → X → Prop) (M : Step X W R) (eps dl : List R) : Prop :=
  ∀ h : List W, h.length < eps.length →
    DP Nbr (M h) (eps.getD h.length 0) (dl.getD h.length 0)

/-- **Hypothesis (COMP of Lemma 11).** For every stop `i`, the prefix mechanism
`M^{k_i} = (M_1, …, M_{k_i})` is `(ε^{k_i}, δ^{k_i})`-DP. -/
def PrefixDP (Nbr : X → X → Prop) (M : Step X W R) (ks : List Nat)
    (epsK delK : Fin ks.length → R) : Prop :=
  ∀ i, DP Nbr (prefixMech M (ks.get i)) (epsK i) (delK i)

/-- **Hypothesis (noise).** Shifting the centre of the noise by `s` costs at most `e^{|s| r}`
per output. -/
def ShiftDominated {C : Type} [Enum C] (N : Int → Dist C R) (r : R) : Prop :=
  ∀ (u u' : Int) (c : C), (N u).mass c ≤ exp (natR (u - u').natAbs * r) * (N u').mass c

/-- **Hypothesis (sensitivity of the gridded gradient).** For every released history,
neighbouring databases' integer centres differ by at most `m` in L1 norm. -/
def L1Sensitive {C : Type} (Nbr : X → X → Prop) (d : Nat) (g : List (Vec C d) → X → Vec Int d)
    (m : Nat) : Prop :=
  ∀ (h : List (Vec C d)) (x x' : X), Nbr x x' → l1 d (g h x).1 (g h x').1 ≤ m

/-! ### Non-vacuity -/

/-- Steps that ignore the database satisfy `StepsDP` for all nonnegative parameters. -/
theorem stepsDP_const (Nbr : X → X → Prop) (p : List W → Dist W R) (eps dl : List R)
    (heps : ∀ j, 0 ≤ eps.getD j 0) (hdl : ∀ j, 0 ≤ dl.getD j 0) :
    StepsDP Nbr (fun h _ => p h) eps dl := by
  intro h _ x x' _ S
  have h1 := one_le_exp (heps h.length)
  have h2 := hdl h.length
  have h3 := Pr_nonneg (p h) S
  have h4 := mul_le_mul_right' (Pr (p h) S) h1 h3
  show Pr (p h) S ≤ exp (eps.getD h.length 0) * Pr (p h) S + dl.getD h.length 0
  generalize Pr (p h) S = a at h3 h4 ⊢
  generalize exp (eps.getD h.length 0) = e at h1 h4 ⊢
  generalize dl.getD h.length 0 = δ at h2 ⊢
  grind

/-- Randomised response on the parity of the centre: `true` with probability
`e^r/(1 + e^r)` if `u` is even, `1/(1 + e^r)` if odd. -/
def rrKernel (r : R) (u : Int) : Dist Bool R where
  mass := fun c => if c = decide (u % 2 = 0) then exp r * (1 + exp r)⁻¹ else (1 + exp r)⁻¹
  nonneg := by
    have hp : 0 < (1 + exp r)⁻¹ := inv_pos' (by have := exp_pos r; grind)
    have := exp_pos r
    intro c
    split
    · exact mul_nonneg' (by grind) (by grind)
    · grind
  total := by
    have hne : (1 + exp r) ≠ 0 := by have := exp_pos r; grind
    have hinv : (1 + exp r) * (1 + exp r)⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel hne
    show (if false = decide (u % 2 = 0) then exp r * (1 + exp r)⁻¹ else (1 + exp r)⁻¹)
      + ((if true = decide (u % 2 = 0) then exp r * (1 + exp r)⁻¹ else (1 + exp r)⁻¹) + 0) = 1
    generalize (1 + exp r)⁻¹ = q at hinv
    cases decide (u % 2 = 0) <;> simp <;> grind

/-- `rrKernel r` is shift-dominated with rate `r` (for `r ≥ 0`). -/
theorem shiftDominated_rr (r : R) (hr : 0 ≤ r) : ShiftDominated (rrKernel r) r := by
  intro u u' c
  have hA : 1 ≤ exp r := one_le_exp hr
  have hq : 0 < (1 + exp r)⁻¹ := inv_pos' (by have := exp_pos r; grind)
  -- every mass is `A q` or `q`
  have hv : ∀ v, (rrKernel r v).mass c = exp r * (1 + exp r)⁻¹ ∨
      (rrKernel r v).mass c = (1 + exp r)⁻¹ := by
    intro v
    show (if c = decide (v % 2 = 0) then exp r * (1 + exp r)⁻¹ else (1 + exp r)⁻¹)
        = exp r * (1 + exp r)⁻¹ ∨
      (if c = decide (v % 2 = 0) then exp r * (1 + exp r)⁻¹ else (1 + exp r)⁻¹) = (1 + exp r)⁻¹
    split
    · exact Or.inl rfl
    · exact Or.inr rfl
  by_cases hu : u = u'
  · subst hu
    have e0 : natR (u - u).natAbs * r = (0 : R) := by
      rw [show (u - u).natAbs = 0 by omega, natR_zero]
      grind
    rw [e0, exp_zero]
    grind
  · have h1 : 1 ≤ (u - u').natAbs := by omega
    have hn : (1 : R) ≤ natR (u - u').natAbs := by
      have := natR_le (R := R) h1
      rw [natR_succ, natR_zero] at this
      grind
    have hE : exp r ≤ exp (natR (u - u').natAbs * r) := by
      apply exp_le_exp
      have := mul_le_mul_right' r hn hr
      grind
    have hm' := (rrKernel r u').nonneg c
    -- `mass u c ≤ e^r · mass u' c`
    have hstep : (rrKernel r u).mass c ≤ exp r * (rrKernel r u').mass c := by
      have hqA : (1 + exp r)⁻¹ ≤ exp r * (1 + exp r)⁻¹ := by
        have := mul_le_mul_right' (1 + exp r)⁻¹ hA (by grind)
        grind
      have hAA : exp r * (1 + exp r)⁻¹ ≤ exp r * (exp r * (1 + exp r)⁻¹) :=
        mul_le_mul_left' (exp r) hqA (by grind)
      rcases hv u with h | h <;> rcases hv u' with h' | h' <;> rw [h, h'] <;> grind
    have := mul_le_mul_right' ((rrKernel r u').mass c) hE hm'
    grind

/-- The identity query on `ℤ` (one coordinate) has L1 sensitivity 1 for `|x − x'| ≤ 1`. -/
theorem l1Sensitive_id {C : Type} :
    L1Sensitive (C := C) (fun x x' : Int => (x - x').natAbs ≤ 1) 1
      (fun _ x => ⟨[x], rfl⟩) 1 := by
  intro h x x' hx
  show (x - x').natAbs + 0 ≤ 1
  omega

end

end Odp.Mech.Iter
