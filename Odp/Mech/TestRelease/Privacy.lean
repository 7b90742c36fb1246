/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Test-and-release (Hartmann et al. 2022, Sec. 6: Alg. 4, Alg. 5, Theorem 17, Corollary 18), on the grid

The paper, Theorem 17: "Alg. 5 is `({ℝᵈ, {⊥}}, ℰ, 0)`-ODP with
`ℰ(ℝᵈ) = max(ε₁, (2/n_test)/a · ε₂)` and `ℰ({⊥}) = min(ℰ(ℝᵈ), ε₂)` w.r.t. a change in either
`x_train` or `x_test`", with `a = max(2/n_test, 2(exp(2/(n_train Λ)) − 1))`; Corollary 18: for
`ε₁ ≥ ε₂`, `ℰ(ℝᵈ) = ε₁` and `ℰ({⊥}) = ε₂`.

The mechanism modelled is odp's `TestedLogisticRegression.release` (`python/odp/mechanisms/erm.py`):
draw the model `p̃ ∼ rel(x_train)` (Alg. 4 on a finite grid `V`), compute its test score
`score p̃ x_test` in grid units, add discrete Laplace noise `Z` of scale `units/ε₂` grid units,
release `p̃` if `score + Z ≤ thr`, else `⊥` (`testRelease`). Neighbours (`trNbr`) replace one
training record (test set unchanged) or one test record (training set unchanged).

What is proved (`test_release_odp`): the mechanism is `({values, ⊥}, testReleaseCosts, 0)`-ODP
with exactly the costs odp declares,
`ℰ(values) = max(ε₁, (units_test/units)·ε₂)` and
`ℰ(⊥) = min(ℰ(values), (max(units_train, units_test)/units)·ε₂)`,
from these hypotheses (all in `Odp/Mech/Common/Noise.lean`):
* `Z : TailNoise R (ε₂/units)` — one grid unit of the threshold costs `e^{ε₂/units}` (the
  discrete Laplace of scale `units/ε₂`);
* `ERMRelease NbrTr rel score ε₁ units_train` — Alg. 4's release is `ε₁`-DP in the training set,
  and under the coupling of App. D (same continuous noise) the score moves by at most
  `units_train` (stated);
* `TestSensitivity NbrTe score units_test` — a test record moves the score by at most
  `units_test` (stated).
How: the value events by the release's DP (a training change) or the test noise's shift (a test
change); `{⊥}` by the test noise's shift (a test change) and, for a training change, by the
release's DP *or* by the coupling (whichever the declared `ℰ(⊥)` covers) — App. D's argument
with `g₁` evaluated through the coupling. Then the generic lemma `odp_valueOrBottom`.

`thm17` restates it with the paper's costs (`ℰ(⊥) = min(ℰ(values), ε₂)`), valid when
`units_train, units_test ≤ units` (the grid analogue of `a = max(2/n_test, …)`, true of odp's
constants); `cor18` is Corollary 18 (`ε₁ ≥ ε₂`: costs `ε₁` and `ε₂`).

Narrower than the paper: the test noise is discrete and the score is on a grid (odp's
implementation), so `(2/n_test)/a` becomes `units_test/units`; the model is on a finite grid
(see `Odp/Mech/Common/Noise.lean`, "Finiteness"); Lemma 21 and Theorem 16 (the sensitivities and
the DP of Alg. 4) are hypotheses, not proved.
-/
module

public import Odp.Mech.PTR.Privacy
public import Odp.Mech.Common.NoiseLaws

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core

noncomputable section

open ExpField

variable {R Xtr Xte V : Type} [ExpField R]

open Classical in
/-- `max a b` in `R`. -/
def rmax (a b : R) : R := if a ≤ b then b else a

open Classical in
/-- `min a b` in `R`. -/
def rmin (a b : R) : R := if a ≤ b then a else b

theorem le_rmax_left (a b : R) : a ≤ rmax a b := by
  unfold rmax; by_cases h : a ≤ b <;> simp [h] <;> grind

theorem le_rmax_right (a b : R) : b ≤ rmax a b := by
  unfold rmax; by_cases h : a ≤ b <;> simp [h] <;> grind

theorem rmax_le {a b c : R} (ha : a ≤ c) (hb : b ≤ c) : rmax a b ≤ c := by
  unfold rmax; by_cases h : a ≤ b <;> simp [h] <;> grind

theorem rmin_le_right (a b : R) : rmin a b ≤ b := by
  unfold rmin; by_cases h : a ≤ b <;> simp [h] <;> grind

theorem rmin_cases (a b : R) : rmin a b = a ∨ rmin a b = b := by
  unfold rmin; by_cases h : a ≤ b <;> simp [h]

theorem le_rmin {a b c : R} (ha : c ≤ a) (hb : c ≤ b) : c ≤ rmin a b := by
  unfold rmin; by_cases h : a ≤ b <;> simp [h] <;> grind

/-- Neighbouring inputs of Alg. 5: one training record or one test record replaced. -/
def trNbr (NbrTr : Xtr → Xtr → Prop) (NbrTe : Xte → Xte → Prop) :
    Xtr × Xte → Xtr × Xte → Prop :=
  fun p p' => (NbrTr p.1 p'.1 ∧ p.2 = p'.2) ∨ (p.1 = p'.1 ∧ NbrTe p.2 p'.2)

variable [Enum V]

/-- **Alg. 5** on the grid (odp's `TestedLogisticRegression.release`): `p̃ ∼ rel(x_train)`; it is
released iff `score p̃ x_test + Z ≤ thr`, which has probability `Pr(Z ≤ thr − score) =
1 − G(thr − score + 1)`; else `⊥`. -/
def testRelease {c : R} (Z : TailNoise R c) (rel : Xtr → Dist V R) (score : V → Xte → Int)
    (thr : Int) : Mechanism (Xtr × Xte) (Option V) R :=
  fun p => gate (rel p.1) (fun v => 1 - Z.G (thr - score v p.2 + 1))
    (fun v => by have := Z.le_one (thr - score v p.2 + 1); grind)
    (fun v => by have := Z.nonneg (thr - score v p.2 + 1); grind)

/-- The ODP costs odp declares for `TestedLogisticRegression` (Theorem 17 on the grid):
`ℰ(values) = max(ε₁, (units_test/units)·ε₂)`,
`ℰ(⊥) = min(ℰ(values), (max(units_train, units_test)/units)·ε₂)`. -/
def testReleaseCosts (ε₁ ε₂ : R) (units unitsTest unitsTrain : Nat) : ValueOrBottom → R
  | .value => rmax ε₁ (natR unitsTest / natR units * ε₂)
  | .bottom => rmin (rmax ε₁ (natR unitsTest / natR units * ε₂))
      (natR (max unitsTrain unitsTest) / natR units * ε₂)

/-- The point mass of `v`: `Pr(d = v) = d v`. -/
theorem Pr_singleton [DecidableEq V] (d : Dist V R) (v : V) :
    Pr d (fun u => decide (u = v)) = d.mass v := by
  unfold Pr
  have h := lsum_indicator_mem (Enum.elems : List V) Enum.nodup v (d.mass v)
  rw [if_pos (Enum.complete v)] at h
  rw [← h]
  apply fsum_congr
  intro u
  by_cases hu : u = v
  · subst hu; simp
  · simp [hu]

/-- `ε`-DP with `δ = 0` on a finite type is a pointwise bound of the masses. -/
theorem mass_le_of_dp {X : Type} (Nbr : X → X → Prop) (M : Mechanism X V R) (ε : R)
    (h : DP Nbr M ε 0) {x x' : X} (hx : Nbr x x') (v : V) :
    (M x).mass v ≤ exp ε * (M x').mass v := by
  classical
  have := h x x' hx (fun u => decide (u = v))
  rw [Pr_singleton, Pr_singleton] at this
  grind

/-- Termwise `f ≤ k·g` on a set `C` sums to `∑_C f ≤ k ∑_C g`. -/
theorem fsum_ite_le (C : Event V) (f g : V → R) (k : R) (h : ∀ v, f v ≤ k * g v) :
    fsum (fun v => if C v then f v else 0) ≤ k * fsum (fun v => if C v then g v else 0) := by
  rw [← fsum_mul_left]
  apply fsum_le
  intro v
  cases C v
  · simp; grind
  · simp; exact h v

/-- `e^a·y ≤ e^b·y` for `a ≤ b`, `y ≥ 0`. -/
theorem exp_mul_mono {a b y : R} (h : a ≤ b) (hy : 0 ≤ y) : exp a * y ≤ exp b * y :=
  mul_le_mul_right' y (exp_le_exp _ _ h) hy

/-- `(m/u)·ε = m·(ε/u)`. -/
theorem natR_div_mul (m u : Nat) (ε : R) :
    natR m / natR u * ε = natR m * (ε / natR u) := by
  rw [Lean.Grind.Field.div_eq_mul_inv, Lean.Grind.Field.div_eq_mul_inv]
  grind

/-- `m ≤ m'` gives `(m/u)·ε ≤ (m'/u)·ε` for `ε ≥ 0`. -/
theorem natR_div_mul_le {m m' : Nat} (u : Nat) (hu : 0 < u) {ε : R} (hε : 0 ≤ ε) (h : m ≤ m') :
    natR m / natR u * ε ≤ natR m' / natR u * ε := by
  rw [natR_div_mul, natR_div_mul]
  have hi := inv_pos' (natR_pos (R := R) hu)
  have hc : 0 ≤ ε / natR u := by
    rw [Lean.Grind.Field.div_eq_mul_inv]; exact mul_nonneg' hε (by grind)
  exact mul_le_mul_right' _ (natR_le h) hc

/-- The coupling step of App. D: if `f v ≤ k·f v'` on the support of a coupling of `p` and `q`,
then `∑ p·f ≤ k ∑ q·f`. -/
theorem coupling_bound (p q : Dist V R) (π : V → V → R) (f : V → R) (k : R)
    (hπ : ∀ v v', 0 ≤ π v v') (hp : ∀ v, fsum (fun v' => π v v') = p.mass v)
    (hq : ∀ v', fsum (fun v => π v v') = q.mass v')
    (hf : ∀ v v', π v v' ≠ 0 → f v ≤ k * f v') :
    fsum (fun v => p.mass v * f v) ≤ k * fsum (fun v => q.mass v * f v) := by
  have e1 : fsum (fun v => p.mass v * f v) = fsum (fun v => fsum (fun v' => π v v' * f v)) := by
    apply fsum_congr
    intro v
    rw [← hp v]
    have h1 := fsum_mul_left (f v) (fun v' => π v v')
    have h2 : fsum (fun v' => π v v' * f v) = fsum (fun v' => f v * π v v') :=
      fsum_congr (fun v' => by grind)
    rw [h2, h1]
    generalize fsum (fun v' => π v v') = s
    grind
  have e2 : k * fsum (fun v => q.mass v * f v)
      = fsum (fun v' => fsum (fun v => π v v' * (k * f v'))) := by
    rw [← fsum_mul_left]
    apply fsum_congr
    intro v'
    rw [← hq v']
    have h1 := fsum_mul_left (k * f v') (fun v => π v v')
    have h2 : fsum (fun v => π v v' * (k * f v')) = fsum (fun v => k * f v' * π v v') :=
      fsum_congr (fun v => by grind)
    rw [h2, h1]
    generalize fsum (fun v => π v v') = s
    grind
  rw [e1, e2, fsum_comm (fun v' v => π v v' * (k * f v'))]
  apply fsum_le
  intro v
  apply fsum_le
  intro v'
  by_cases h0 : π v v' = 0
  · rw [h0]; grind
  · exact mul_le_mul_left' _ (hf v v' h0) (hπ v v')

/-- **Theorem 17 on the grid** (odp's declared guarantee of `TestedLogisticRegression`): Alg. 5
is `({values, ⊥}, testReleaseCosts ε₁ ε₂ units units_test units_train, 0)`-ODP with respect to a
change of one training record or one test record. -/
theorem test_release_odp (NbrTr : Xtr → Xtr → Prop) (NbrTe : Xte → Xte → Prop) (ε₁ ε₂ : R)
    (units unitsTest unitsTrain : Nat) (hunits : 0 < units) (hε₂ : 0 ≤ ε₂)
    (Z : TailNoise R (ε₂ / natR units)) (rel : Xtr → Dist V R) (score : V → Xte → Int)
    (thr : Int) (hrel : ERMRelease NbrTr rel score ε₁ unitsTrain)
    (htest : TestSensitivity NbrTe score unitsTest) :
    ODP (trNbr NbrTr NbrTe) (testRelease Z rel score thr) vob
      (testReleaseCosts ε₁ ε₂ units unitsTest unitsTrain) 0 := by
  have hc : 0 ≤ ε₂ / natR units := by
    have hi := inv_pos' (natR_pos (R := R) hunits)
    rw [Lean.Grind.Field.div_eq_mul_inv]; exact mul_nonneg' hε₂ (by grind)
  -- the costs, in the form the noise gives them
  have hte : natR unitsTest * (ε₂ / natR units)
      ≤ testReleaseCosts ε₁ ε₂ units unitsTest unitsTrain .value := by
    rw [← natR_div_mul]; exact le_rmax_right _ _
  have hε₁ : ε₁ ≤ testReleaseCosts ε₁ ε₂ units unitsTest unitsTrain .value := le_rmax_left _ _
  have hbte : natR unitsTest * (ε₂ / natR units)
      ≤ testReleaseCosts ε₁ ε₂ units unitsTest unitsTrain .bottom := by
    rw [← natR_div_mul]
    exact le_rmin (le_rmax_right _ _)
      (natR_div_mul_le units hunits hε₂ (Nat.le_max_right unitsTrain unitsTest))
  apply odp_valueOrBottom
  · -- the events of values
    intro p p' hp C
    simp only [testRelease, Pr_gate_valEvent]
    have hnn : 0 ≤ fsum (fun v => if C v then (rel p'.1).mass v
        * (1 - Z.G (thr - score v p'.2 + 1)) else 0) := by
      apply fsum_nonneg
      intro v
      cases C v
      · simp; grind
      · simp
        exact mul_nonneg' ((rel p'.1).nonneg v) (by have := Z.le_one (thr - score v p'.2 + 1); grind)
    rcases hp with ⟨htr, hte2⟩ | ⟨htr, hte2⟩
    · -- a training record: the release's DP
      rw [hte2]
      have h := fsum_ite_le C (fun v => (rel p.1).mass v * (1 - Z.G (thr - score v p'.2 + 1)))
        (fun v => (rel p'.1).mass v * (1 - Z.G (thr - score v p'.2 + 1))) (exp ε₁) (by
          intro v
          have h1 := mass_le_of_dp NbrTr rel ε₁ hrel.dp htr v
          have h2 : 0 ≤ 1 - Z.G (thr - score v p'.2 + 1) := by
            have := Z.le_one (thr - score v p'.2 + 1); grind
          have := mul_le_mul_right' _ h1 h2
          grind)
      have h3 := exp_mul_mono hε₁ hnn
      grind
    · -- a test record: the test noise's shift
      rw [htr]
      have h := fsum_ite_le C (fun v => (rel p'.1).mass v * (1 - Z.G (thr - score v p.2 + 1)))
        (fun v => (rel p'.1).mass v * (1 - Z.G (thr - score v p'.2 + 1)))
        (exp (natR unitsTest * (ε₂ / natR units))) (by
          intro v
          have h1 := Z.compl_close unitsTest
            (t := thr - score v p.2 + 1) (t' := thr - score v p'.2 + 1)
            (by have := htest v p.2 p'.2 hte2; omega)
          have := mul_le_mul_left' ((rel p'.1).mass v) h1 ((rel p'.1).nonneg v)
          grind)
      have h3 := exp_mul_mono hte hnn
      grind
  · -- the event `{⊥}`
    intro p p' hp
    simp only [testRelease, gate_none]
    have e : ∀ q : Xtr × Xte, fsum (fun v => (rel q.1).mass v
          * (1 - (1 - Z.G (thr - score v q.2 + 1))))
        = fsum (fun v => (rel q.1).mass v * Z.G (thr - score v q.2 + 1)) :=
      fun q => fsum_congr (fun v => by grind)
    rw [e p, e p']
    have hnn : 0 ≤ fsum (fun v => (rel p'.1).mass v * Z.G (thr - score v p'.2 + 1)) :=
      fsum_nonneg (fun v => mul_nonneg' ((rel p'.1).nonneg v) (Z.nonneg _))
    rcases hp with ⟨htr, hte2⟩ | ⟨htr, hte2⟩
    · rw [hte2]
      rcases rmin_cases (testReleaseCosts ε₁ ε₂ units unitsTest unitsTrain .value)
          (natR (max unitsTrain unitsTest) / natR units * ε₂) with hb | hb
      · -- ℰ(⊥) = ℰ(values) ≥ ε₁: the release's DP
        have h : fsum (fun v => (rel p.1).mass v * Z.G (thr - score v p'.2 + 1))
            ≤ exp ε₁ * fsum (fun v => (rel p'.1).mass v * Z.G (thr - score v p'.2 + 1)) := by
          rw [← fsum_mul_left]
          apply fsum_le
          intro v
          have h1 := mass_le_of_dp NbrTr rel ε₁ hrel.dp htr v
          have := mul_le_mul_right' _ h1 (Z.nonneg (thr - score v p'.2 + 1))
          grind
        have hb' : testReleaseCosts ε₁ ε₂ units unitsTest unitsTrain .bottom
            = testReleaseCosts ε₁ ε₂ units unitsTest unitsTrain .value := hb
        have h3 := exp_mul_mono hε₁ hnn
        rw [hb']
        grind
      · -- ℰ(⊥) = (max(units_train, units_test)/units)·ε₂: the coupling of App. D
        obtain ⟨π, hπ0, hπ1, hπ2, hπs⟩ := hrel.coupling p.1 p'.1 htr
        have h := coupling_bound (rel p.1) (rel p'.1) π
          (fun v => Z.G (thr - score v p'.2 + 1))
          (exp (natR unitsTrain * (ε₂ / natR units))) hπ0 hπ1 hπ2 (by
            intro v v' hne
            exact Z.tail_close unitsTrain (by have := hπs v v' hne p'.2; omega))
        have hb' : testReleaseCosts ε₁ ε₂ units unitsTest unitsTrain .bottom
            = natR (max unitsTrain unitsTest) / natR units * ε₂ := hb
        have hle : natR unitsTrain * (ε₂ / natR units)
            ≤ testReleaseCosts ε₁ ε₂ units unitsTest unitsTrain .bottom := by
          rw [hb', ← natR_div_mul]
          exact natR_div_mul_le units hunits hε₂ (Nat.le_max_left unitsTrain unitsTest)
        have h3 := exp_mul_mono hle hnn
        grind
    · -- a test record: the test noise's shift
      rw [htr]
      have h : fsum (fun v => (rel p'.1).mass v * Z.G (thr - score v p.2 + 1))
          ≤ exp (natR unitsTest * (ε₂ / natR units))
            * fsum (fun v => (rel p'.1).mass v * Z.G (thr - score v p'.2 + 1)) := by
        rw [← fsum_mul_left]
        apply fsum_le
        intro v
        have h1 := Z.tail_close unitsTest
          (t := thr - score v p.2 + 1) (t' := thr - score v p'.2 + 1)
          (by have := htest v p.2 p'.2 hte2; omega)
        have := mul_le_mul_left' ((rel p'.1).mass v) h1 ((rel p'.1).nonneg v)
        grind
      have h3 := exp_mul_mono hbte hnn
      grind

/-- Larger costs keep an ODP guarantee. -/
theorem odp_mono_costs {X O K : Type} [Enum O] [Enum K] [DecidableEq K] (Nbr : X → X → Prop)
    (M : Mechanism X O R) (κ : O → K) (E E' : K → R) (δ : R) (hE : ∀ k, E k ≤ E' k)
    (h : ODP Nbr M κ E δ) : ODP Nbr M κ E' δ := by
  intro x x' hx S
  have h1 := h x x' hx S
  have h2 : fsum (fun k => exp (E k) * Pr (M x') (fun o => S o && decide (κ o = k)))
      ≤ fsum (fun k => exp (E' k) * Pr (M x') (fun o => S o && decide (κ o = k))) :=
    fsum_le (fun k => exp_mul_mono (hE k) (Pr_nonneg _ _))
  grind

/-- The paper's costs of Theorem 17 on the grid: `ℰ(values) = max(ε₁, (units_test/units)·ε₂)`,
`ℰ(⊥) = min(ℰ(values), ε₂)`. -/
def thm17Costs (ε₁ ε₂ : R) (units unitsTest : Nat) : ValueOrBottom → R
  | .value => rmax ε₁ (natR unitsTest / natR units * ε₂)
  | .bottom => rmin (rmax ε₁ (natR unitsTest / natR units * ε₂)) ε₂

/-- The costs of Corollary 18: `ℰ(values) = ε₁`, `ℰ(⊥) = ε₂`. -/
def cor18Costs (ε₁ ε₂ : R) : ValueOrBottom → R
  | .value => ε₁
  | .bottom => ε₂

theorem natR_div_le_one {m u : Nat} (hu : 0 < u) (h : m ≤ u) : (natR m / natR u : R) ≤ 1 := by
  have hpos := natR_pos (R := R) hu
  have hi := inv_pos' hpos
  have h1 : (natR u : R) * (natR u)⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel (by grind)
  have h2 := mul_le_mul_right' (natR u : R)⁻¹ (natR_le (R := R) h) (by grind)
  rw [Lean.Grind.Field.div_eq_mul_inv]
  grind

/-- **Theorem 17** with the paper's `ℰ(⊥) = min(ℰ(values), ε₂)`, on the grid: valid when
`units_train, units_test ≤ units` (the grid form of `a = max(2/n_test, 2(e^{2/(n_train Λ)} − 1))`;
odp's `units` is the ceiling of `a` in grid units, so this holds for its constants). -/
theorem thm17 (NbrTr : Xtr → Xtr → Prop) (NbrTe : Xte → Xte → Prop) (ε₁ ε₂ : R)
    (units unitsTest unitsTrain : Nat) (hunits : 0 < units) (hε₂ : 0 ≤ ε₂)
    (hte : unitsTest ≤ units) (htr : unitsTrain ≤ units)
    (Z : TailNoise R (ε₂ / natR units)) (rel : Xtr → Dist V R) (score : V → Xte → Int)
    (thr : Int) (hrel : ERMRelease NbrTr rel score ε₁ unitsTrain)
    (htest : TestSensitivity NbrTe score unitsTest) :
    ODP (trNbr NbrTr NbrTe) (testRelease Z rel score thr) vob
      (thm17Costs ε₁ ε₂ units unitsTest) 0 := by
  apply odp_mono_costs _ _ _ (testReleaseCosts ε₁ ε₂ units unitsTest unitsTrain)
  · intro k
    cases k with
    | value => show rmax _ _ ≤ rmax _ _; grind
    | bottom =>
      show rmin _ _ ≤ rmin _ _
      have hm : natR (max unitsTrain unitsTest) / natR units * ε₂ ≤ ε₂ := by
        have h1 := natR_div_le_one (R := R) hunits (Nat.max_le.mpr ⟨htr, hte⟩)
        have := mul_le_mul_right' ε₂ h1 hε₂
        grind
      unfold rmin
      by_cases h1 : rmax ε₁ (natR unitsTest / natR units * ε₂)
          ≤ natR (max unitsTrain unitsTest) / natR units * ε₂
      · by_cases h2 : rmax ε₁ (natR unitsTest / natR units * ε₂) ≤ ε₂ <;> simp [h1, h2] <;> grind
      · by_cases h2 : rmax ε₁ (natR unitsTest / natR units * ε₂) ≤ ε₂ <;> simp [h1, h2] <;> grind
  · exact test_release_odp NbrTr NbrTe ε₁ ε₂ units unitsTest unitsTrain hunits hε₂ Z rel score
      thr hrel htest

/-- **Corollary 18** on the grid: for `ε₁ ≥ ε₂ ≥ 0` (and `units_train, units_test ≤ units`, the
grid form of `(2/n_test)/a ≤ 1`), Alg. 5 is `({values, ⊥}, (ε₁, ε₂), 0)`-ODP. -/
theorem cor18 (NbrTr : Xtr → Xtr → Prop) (NbrTe : Xte → Xte → Prop) (ε₁ ε₂ : R)
    (units unitsTest unitsTrain : Nat) (hunits : 0 < units) (hε₂ : 0 ≤ ε₂) (hε : ε₂ ≤ ε₁)
    (hte : unitsTest ≤ units) (htr : unitsTrain ≤ units)
    (Z : TailNoise R (ε₂ / natR units)) (rel : Xtr → Dist V R) (score : V → Xte → Int)
    (thr : Int) (hrel : ERMRelease NbrTr rel score ε₁ unitsTrain)
    (htest : TestSensitivity NbrTe score unitsTest) :
    ODP (trNbr NbrTr NbrTe) (testRelease Z rel score thr) vob (cor18Costs ε₁ ε₂) 0 := by
  apply odp_mono_costs _ _ _ (testReleaseCosts ε₁ ε₂ units unitsTest unitsTrain)
  · have ht : natR unitsTest / natR units * ε₂ ≤ ε₂ := by
      have h1 := natR_div_le_one (R := R) hunits hte
      have := mul_le_mul_right' ε₂ h1 hε₂
      grind
    have hm : natR (max unitsTrain unitsTest) / natR units * ε₂ ≤ ε₂ := by
      have h1 := natR_div_le_one (R := R) hunits (Nat.max_le.mpr ⟨htr, hte⟩)
      have := mul_le_mul_right' ε₂ h1 hε₂
      grind
    intro k
    cases k with
    | value =>
      show rmax ε₁ (natR unitsTest / natR units * ε₂) ≤ ε₁
      exact rmax_le (by grind) (by grind)
    | bottom =>
      show rmin (rmax ε₁ (natR unitsTest / natR units * ε₂))
        (natR (max unitsTrain unitsTest) / natR units * ε₂) ≤ ε₂
      exact le_trans' (rmin_le_right _ _) hm
  · exact test_release_odp NbrTr NbrTe ε₁ ε₂ units unitsTest unitsTrain hunits hε₂ Z rel score
      thr hrel htest

end

end Odp.Mech
