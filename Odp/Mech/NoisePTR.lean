/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Trust boundary of the PTR, M_IQR and test-and-release proofs

**This file is part of the trust boundary.** Everything that `Odp/Mech/PTR.lean`,
`Odp/Mech/PTRLaws.lean`, `Odp/Mech/IQR.lean`, `Odp/Mech/IQRPipeline.lean` and
`Odp/Mech/TestRelease.lean` assume about the
noise primitives and about the deterministic data statistics of the mechanisms is defined here,
as structures and predicates that the theorems take as *arguments* (never as axioms). Nothing
else is assumed there. For each hypothesis: what it says, which real distribution (or which
deterministic function of odp's Python code) satisfies it, and why.

## Noise

* `TailNoise R c` — an integer noise `Z`, seen only through its tail `G t = Pr(Z ≥ t)`:
  `0 ≤ G ≤ 1`, `G` antitone, and one step of the threshold costs `e^c`:
  `G t ≤ e^c · G (t + 1)` and `1 − G (t + 1) ≤ e^c · (1 − G t)`.
  *Satisfied by* the discrete Laplace distribution with scale `b` (`p(z) ∝ e^{−|z|/b}`) for
  `c = 1/b`: `p(z) ≤ e^{1/b} p(z + 1)` and `p(z + 1) ≤ e^{1/b} p(z)`, hence
  `G t = ∑_{z ≥ t} p z = ∑_{z ≥ t+1} p (z − 1) ≤ e^{1/b} G (t + 1)` and
  `1 − G (t + 1) = ∑_{z ≤ t} p z = ∑_{z ≤ t − 1} p (z + 1) ≤ e^{1/b} (1 − G t)`.
  Used for the PTR test noise (scale `1/ε`, so `c = ε`) and for the test noise of Alg. 5 (scale
  `M/ε₂` grid units, so `c = ε₂/M`). Only threshold events `{Z ≥ t}` of this noise occur in the
  mechanisms, so nothing more about `Z` is assumed.
* `IntLaw R` — the law of an integer noise on *all* subsets of ℤ: a finitely additive
  probability (`P B ≥ 0`, `P ℤ = 1`, `P (B ∪ C) = P B + P C` for disjoint `B, C`). *Satisfied by*
  every probability distribution on ℤ, `P B = ∑_{z ∈ B} p z` (ℤ is countable: every subset is
  measurable, and the sum of a nonnegative summable family is additive).
* `IntLaw.ShiftBound W c` — a shift of the noise by `±1` costs `e^c` on every event:
  `P {z | z + 1 ∈ B} ≤ e^c P B` and `P {z | z − 1 ∈ B} ≤ e^c P B`. *Satisfied by* the discrete
  Laplace with scale `b` for `c = 1/b` (re-index the sum and use the pointwise ratio above).
* `IntLaw.ShiftWithin W n ε` — a shift by any `s` with `|s| ≤ n` costs `e^ε` on every event.
  Follows from `ShiftBound W c` when `n·c ≤ ε` (proved: `IntLaw.shiftWithin_of_shiftBound` in
  `Odp/Mech/PTRLaws.lean`); for `n = 0` every law satisfies it (`IntLaw.shiftWithin_zero`, below).
  Used for the release noise of the log-bin IQR PTR function: scale `(L − 1)/ε` (one step costs
  `ε/(L − 1)`, `L − 1` steps cost `ε`), and no noise at all for `L = 1` (the point mass at 0).
* The pass tail `δ'` of the PTR test is not a structure: the theorems take `Z.G K ≤ δ'`
  (`Pr(Z ≥ K) ≤ δ'`), which odp's `pass_threshold` chooses `K` to satisfy
  (`r^K/(1 + r) ≤ δ'` with `r = e^{−ε}` is exactly the discrete Laplace tail at `K ≥ 1`).

## Stated data facts (deterministic functions; tested in Python, **not proved** here)

* `IQRDataFacts Nbr A sub L` — for one discretisation of Dwork and Lei's IQR estimator
  (`python/odp/mechanisms/ptr/__init__.py`): `A : X → ℤ` is the stability statistic
  (`stability`), `sub x` the sub-bin index `⌊L·(log_b IQR(x) − o)⌋` of the IQR (`none` when the
  IQR is 0). The two facts of the Python docstring:
  1. `A` is 1-Lipschitz for neighbours;
  2. `A x ≥ 2` implies that every neighbour's IQR lies in the same bin `B_k` as `x`'s (both IQRs
     positive). A value in bin `k` has its sub-bin index in `[k·L, k·L + L)` (the bin index is
     `⌊y⌋` and the sub-bin index `⌊L·y⌋` for `y = log_b IQR − o`), and that is how the fact is
     written here.
  These are properties of order statistics and logarithmic bins, argued in the Python docstring
  and tested by `tests/test_ptr.py` (every neighbouring pair of small databases); they are not
  proved in Lean.
* `ERMRelease NbrTr rel score ε₁ m` — Alg. 4 on the grid (`python/odp/mechanisms/erm.py`): the
  released model `p̃ = round(p_min(x_train) + q)` has, for each training set, a distribution
  `rel x_train` on a finite set `V` of grid vectors, and
  1. `rel` is `ε₁`-DP for a change of one training record (Thm. 16 of the paper: the L2
     sensitivity of `p_min` is `2/(n Λ)` and `q` has density `∝ exp(−(nΛε₁/2)‖q‖)`; rounding
     is post-processing);
  2. *the coupling of App. D*: running Alg. 4 on neighbouring training sets with the *same*
     continuous noise `q` gives a joint distribution `π` of `(p̃, p̃')` with marginals `rel a`
     and `rel a'`, and on its support the test score (in grid units) moves by at most `m`
     for every test set (`‖p̃ − p̃'‖ ≤ Δ + h√d`, then Lemma 21's Lipschitz bound of the
     mean absolute error; the Python constant `units_train`).
  The first is a statement about the continuous noise of Alg. 4 (its DP); the second combines
  the coupling with the deterministic sensitivity bound of Lemma 21. Stated, not proved.
* `TestSensitivity NbrTe score m` — changing one test record moves the test score (grid units)
  of every model by at most `m` (Lemma 21, part 2: `2/n_test`, plus float error, in units:
  the Python constant `units_test`). Stated, not proved.
* `MedianDP Nbr med` — the median of the IQR-then-median pipeline, run with budget `e ≥ 0`, is
  `e`-DP: the interface of `Odp/Mech/IQRPipeline.lean`. For odp's `ExponentialMedian` (the
  exponential mechanism of McSherry and Talwar on a public grid, `P(y) ∝ exp(e·u(y)/2)`) it is
  *proved* (`expMedian_dp`, `Odp/Mech/IQRMedian.lean`) from:
* `UtilitySensitivity Nbr u` — the utility `u(y) = −max(#{xᵢ < y}, #{xᵢ > y})` changes by at
  most 1 between neighbours (replacing one record moves each count by at most 1). A property
  of counts; stated (tested in Python), not proved. That odp's rejection sampler draws exactly
  `P(y) ∝ exp(e·u(y)/2)` (uniform proposal, exact `Bernoulli(exp(−γ))` acceptance) is, like
  every sampler's correctness, a property of the noise primitive, not proved here.

## Finiteness

The Core's Theorem 7 needs finite output types (`Enum`). The released IQR index and the released
model range over infinite sets in the Python code; the theorems here hold for *every* finite
post-processing of the release (e.g. clamping to a window), and the statement for the infinite
output follows from those by continuity of probability (every finite event lies in some window);
that limit step is not formalised.

## Non-vacuity (instances over any `ExpField`)

* `TailNoise.logistic c` (for `0 ≤ c`): `G t = 1/(1 + e^{c·t})`, the tail of a discretised
  logistic law on ℤ — a genuine distribution on ℤ with every shift ratio `≤ e^c`.
* `TailNoise.zero c`: `G ≡ 0`; it satisfies every pass-tail bound `G K ≤ δ'` with `δ' ≥ 0`.
* `IntLaw.dirac z₀` with `IntLaw.shiftWithin_zero` (the noiseless release, `L = 1`). No finitely
  supported law satisfies `ShiftBound` (shift the event just past the largest point of the
  support), and an infinitely supported one needs infinite sums, which an abstract `ExpField`
  does not have: for `L ≥ 2` the witness is the discrete Laplace over ℝ (Mathlib layer, stated).
* `IQRDataFacts.const` (a constant statistic `A ≡ 1`), `ERMRelease.const` (a release that does
  not depend on the training set, with the diagonal coupling), `TestSensitivity.const`,
  `MedianDP.const` (a median that ignores the data), `UtilitySensitivity.const`.
-/
module

public import Odp.Core.Defs

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech

open Odp.Core

noncomputable section

open ExpField

variable {R : Type} [ExpField R]

/-! ### Noise -/

/-- An integer noise `Z` through its tail `G t = Pr(Z ≥ t)`, with one threshold step costing
`e^c` in both directions (the discrete Laplace with scale `1/c`). -/
structure TailNoise (R : Type) [ExpField R] (c : R) where
  /-- `G t = Pr(Z ≥ t)` -/
  G : Int → R
  nonneg : ∀ t, 0 ≤ G t
  le_one : ∀ t, G t ≤ 1
  antitone : ∀ t, G (t + 1) ≤ G t
  /-- `Pr(Z ≥ t) ≤ e^c Pr(Z ≥ t + 1)` -/
  up : ∀ t, G t ≤ exp c * G (t + 1)
  /-- `Pr(Z < t + 1) ≤ e^c Pr(Z < t)` -/
  down : ∀ t, 1 - G (t + 1) ≤ exp c * (1 - G t)

/-- The law of an integer noise on all subsets of ℤ: a finitely additive probability. -/
structure IntLaw (R : Type) [ExpField R] where
  /-- `P B = Pr(W ∈ B)` -/
  P : (Int → Bool) → R
  nonneg : ∀ B, 0 ≤ P B
  total : P (fun _ => true) = 1
  additive : ∀ B C : Int → Bool, (∀ z, B z = true → C z = false) →
    P (fun z => B z || C z) = P B + P C

/-- Shifting the noise by `±1` costs `e^c` on every event (the discrete Laplace with scale
`1/c`). -/
def IntLaw.ShiftBound (W : IntLaw R) (c : R) : Prop :=
  ∀ B : Int → Bool, W.P (fun z => B (z + 1)) ≤ exp c * W.P B ∧
    W.P (fun z => B (z - 1)) ≤ exp c * W.P B

/-- Shifting the noise by any `s` with `|s| ≤ n` costs `e^ε` on every event. -/
def IntLaw.ShiftWithin (W : IntLaw R) (n : Nat) (ε : R) : Prop :=
  ∀ (B : Int → Bool) (s : Int), s.natAbs ≤ n → W.P (fun z => B (z + s)) ≤ exp ε * W.P B

/-! ### Stated data facts -/

/-- The two facts about one discretisation of the IQR estimator (Python docstring of
`odp.mechanisms.ptr`): the stability statistic `A` is 1-Lipschitz, and `A x ≥ 2` puts the IQR
of `x` and of every neighbour in one bin `k`, whose sub-bin indices are `k·L, …, k·L + L − 1`.
Stated (tested in Python), not proved. -/
structure IQRDataFacts {X : Type} (Nbr : X → X → Prop) (A : X → Int) (sub : X → Option Int)
    (L : Nat) : Prop where
  lipschitz : ∀ x x', Nbr x x' → A x ≤ A x' + 1 ∧ A x' ≤ A x + 1
  same_bin : ∀ x x', Nbr x x' → 2 ≤ A x →
    ∃ k j j' : Int, sub x = some j ∧ sub x' = some j' ∧
      k * L ≤ j ∧ j < k * L + L ∧ k * L ≤ j' ∧ j' < k * L + L

/-- Alg. 4 on a finite grid `V`: `ε₁`-DP in the training set, and the coupling of App. D (same
continuous noise on neighbouring training sets) under which the test score moves by at most
`m` grid units. Stated, not proved. -/
structure ERMRelease {Xtr V T : Type} [Enum V] (NbrTr : Xtr → Xtr → Prop)
    (rel : Xtr → Dist V R) (score : V → T → Int) (ε₁ : R) (m : Nat) : Prop where
  dp : DP NbrTr rel ε₁ 0
  coupling : ∀ a a', NbrTr a a' → ∃ π : V → V → R, (∀ v v', 0 ≤ π v v') ∧
    (∀ v, fsum (fun v' => π v v') = (rel a).mass v) ∧
    (∀ v', fsum (fun v => π v v') = (rel a').mass v') ∧
    (∀ v v', π v v' ≠ 0 → ∀ t, (score v t - score v' t).natAbs ≤ m)

/-- A change of one test record moves the test score of every model by at most `m` grid units
(Lemma 21, part 2, on the grid). Stated, not proved. -/
def TestSensitivity {V T : Type} (NbrTe : T → T → Prop) (score : V → T → Int) (m : Nat) : Prop :=
  ∀ v t t', NbrTe t t' → (score v t - score v t').natAbs ≤ m

/-- The median mechanism of the IQR-then-median pipeline is `e`-DP (δ = 0) for every budget
`e ≥ 0` it is run with. Stated, not proved. -/
def MedianDP {X Y : Type} [Enum Y] (Nbr : X → X → Prop) (med : R → Mechanism X Y R) : Prop :=
  ∀ e, 0 ≤ e → DP Nbr (med e) e 0

/-- The median's utility `u x y` (odp's `ExponentialMedian.utilities`:
`u(y) = −max(#{xᵢ < y}, #{xᵢ > y})`) changes by at most 1 between neighbours. Stated, not
proved. -/
def UtilitySensitivity {X Y : Type} (Nbr : X → X → Prop) (u : X → Y → Int) : Prop :=
  ∀ x x' y, Nbr x x' → u x y ≤ u x' y + 1 ∧ u x' y ≤ u x y + 1

/-! ### Non-vacuity -/

/-- An integer in `R`. -/
def intR : Int → R
  | .ofNat n => natR n
  | .negSucc n => -(natR n + 1)

theorem intR_succ (t : Int) : (intR (t + 1) : R) = intR t + 1 := by
  cases t with
  | ofNat n => show natR (n + 1) = natR n + 1; exact natR_succ n
  | negSucc n =>
    cases n with
    | zero =>
      have h : Int.negSucc 0 + 1 = Int.ofNat 0 := by decide
      rw [h]
      show natR 0 = -(natR 0 + 1) + 1
      rw [natR_zero]; grind
    | succ m =>
      have h : Int.negSucc (m + 1) + 1 = Int.negSucc m := by omega
      rw [h]
      show -(natR m + 1) = -(natR (m + 1) + 1) + 1
      rw [natR_succ]; grind

theorem inv_le_one_of_one_le {d : R} (h : 1 ≤ d) : d⁻¹ ≤ 1 := by
  have hd : 0 < d := by grind
  have hi := inv_pos' hd
  have h1 : d * d⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel (by grind)
  have h2 := mul_le_mul_right' d⁻¹ h (by grind)
  grind

/-- `b ≤ k·a` with `a, b > 0` gives `a⁻¹ ≤ k·b⁻¹`. -/
theorem inv_le_mul_inv {a b k : R} (ha : 0 < a) (hb : 0 < b) (h : b ≤ k * a) :
    a⁻¹ ≤ k * b⁻¹ := by
  have hai := inv_pos' ha
  have hbi := inv_pos' hb
  have h1 : a * a⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel (by grind)
  have h2 : b * b⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel (by grind)
  have h3 := mul_le_mul_right' (a⁻¹ * b⁻¹) h (mul_nonneg' (by grind) (by grind))
  have e1 : b * (a⁻¹ * b⁻¹) = a⁻¹ * (b * b⁻¹) := by grind
  have e2 : k * a * (a⁻¹ * b⁻¹) = k * b⁻¹ * (a * a⁻¹) := by grind
  rw [e1, e2, h1, h2] at h3
  grind

/-- The logistic tail `1/(1 + e^{c·t})`: a distribution on ℤ whose threshold steps cost at most
`e^c` (non-vacuity of `TailNoise`). -/
def TailNoise.logistic (c : R) (hc : 0 ≤ c) : TailNoise R c where
  G t := (1 + exp (c * intR t))⁻¹
  nonneg t := by
    have := exp_pos (c * intR t)
    have := inv_pos' (show (0 : R) < 1 + exp (c * intR t) by grind)
    grind
  le_one t := by
    have := exp_pos (c * intR t)
    exact inv_le_one_of_one_le (by grind)
  antitone t := by
    have he : exp (c * intR (t + 1)) = exp (c * intR t) * exp c := by
      rw [intR_succ, ← exp_add]; congr 1; grind
    rw [he]
    have h0 := exp_pos (c * intR t)
    have h1 := one_le_exp hc
    have h2 := mul_le_mul_left' (exp (c * intR t)) h1 (by grind)
    have h3 := inv_le_mul_inv (k := 1) (show (0 : R) < 1 + exp (c * intR t) * exp c by
      have := mul_nonneg' (exp_nonneg (c * intR t)) (exp_nonneg c); grind)
      (show (0 : R) < 1 + exp (c * intR t) by grind) (by grind)
    grind
  up t := by
    have he : exp (c * intR (t + 1)) = exp (c * intR t) * exp c := by
      rw [intR_succ, ← exp_add]; congr 1; grind
    rw [he]
    have h0 := exp_pos (c * intR t)
    have h1 := one_le_exp hc
    have h4 := mul_nonneg' (exp_nonneg (c * intR t)) (exp_nonneg c)
    exact inv_le_mul_inv (show (0 : R) < 1 + exp (c * intR t) by grind) (by grind) (by grind)
  down t := by
    have he : exp (c * intR (t + 1)) = exp (c * intR t) * exp c := by
      rw [intR_succ, ← exp_add]; congr 1; grind
    rw [he]
    generalize hE : exp (c * intR t) = E
    have h0 : 0 < E := by rw [← hE]; exact exp_pos _
    have h1 := one_le_exp hc
    generalize exp c = e at h1 ⊢
    -- `1 − (1 + y)⁻¹ = y·(1 + y)⁻¹`
    have hy1 : (0 : R) < 1 + E * e := by have := mul_nonneg' (show (0 : R) ≤ E by grind) (show (0 : R) ≤ e by grind); grind
    have hy0 : (0 : R) < 1 + E := by grind
    have i1 : (1 + E * e) * (1 + E * e)⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel (by grind)
    have i0 : (1 + E) * (1 + E)⁻¹ = 1 := Lean.Grind.Field.mul_inv_cancel (by grind)
    have a1 : 1 - (1 + E * e)⁻¹ = (E * e) * (1 + E * e)⁻¹ := by grind
    have a0 : e * (1 - (1 + E)⁻¹) = (E * e) * (1 + E)⁻¹ := by grind
    rw [a1, a0]
    have hle : (1 + E * e)⁻¹ ≤ 1 * (1 + E)⁻¹ :=
      inv_le_mul_inv hy1 hy0 (by have := mul_le_mul_left' E h1 (by grind); grind)
    have := mul_le_mul_left' (E * e) hle (mul_nonneg' (by grind) (by grind))
    grind

/-- The tail `G ≡ 0` (all mass at `−∞`): satisfies `TailNoise` and every pass-tail bound. -/
def TailNoise.zero (c : R) (hc : 0 ≤ c) : TailNoise R c where
  G _ := 0
  nonneg _ := by grind
  le_one _ := by grind
  antitone _ := by grind
  up _ := by grind
  down _ := by have := one_le_exp hc; grind

/-- The point mass at `z₀` (the noiseless release, `L = 1`). -/
def IntLaw.dirac (z₀ : Int) : IntLaw R where
  P B := if B z₀ then 1 else 0
  nonneg B := by cases B z₀ <;> simp <;> grind
  total := by simp
  additive B C h := by
    cases hB : B z₀ <;> cases hC : C z₀ <;> simp
    · grind
    · grind
    · grind
    · have := h z₀ hB; rw [hC] at this; cases this

/-- Every law satisfies `ShiftWithin` with `n = 0` (and `ε ≥ 0`). -/
theorem IntLaw.shiftWithin_zero (W : IntLaw R) {ε : R} (hε : 0 ≤ ε) : W.ShiftWithin 0 ε := by
  intro B s hs
  have h0 : s = 0 := by omega
  subst h0
  have e : (fun z : Int => B (z + 0)) = B := by funext z; rw [Int.add_zero]
  rw [e]
  have h1 := one_le_exp hε
  have h2 := mul_le_mul_right' (W.P B) h1 (W.nonneg B)
  grind

/-- A constant statistic satisfies the IQR data facts vacuously. -/
theorem IQRDataFacts.const {X : Type} (Nbr : X → X → Prop) (sub : X → Option Int) (L : Nat) :
    IQRDataFacts Nbr (fun _ => 1) sub L where
  lipschitz _ _ _ := by omega
  same_bin _ _ _ h := by omega

/-- A release that ignores the training set, with the diagonal coupling. -/
theorem ERMRelease.const {Xtr V T : Type} [Enum V] [DecidableEq V] (NbrTr : Xtr → Xtr → Prop)
    (d : Dist V R) (score : V → T → Int) {ε₁ : R} (hε : 0 ≤ ε₁) (m : Nat) :
    ERMRelease NbrTr (fun _ => d) score ε₁ m where
  dp _ _ _ S := by
    have := one_le_exp hε
    have := mul_le_mul_right' (Pr d S) this (Pr_nonneg d S)
    grind
  coupling _ _ _ := by
    refine ⟨fun v v' => if v' = v then d.mass v else 0, ?_, ?_, ?_, ?_⟩
    · intro v v'
      by_cases h : v' = v
      · simp [h]; exact d.nonneg v
      · simp [h]; grind
    · intro v
      have := lsum_indicator_mem (Enum.elems : List V) Enum.nodup v (d.mass v)
      rw [if_pos (Enum.complete v)] at this
      exact this
    · intro v'
      have e : (fun v => if v' = v then d.mass v else (0 : R))
          = (fun v => if v = v' then d.mass v' else 0) := by
        funext v
        by_cases h : v = v'
        · subst h; simp
        · have h' : ¬ v' = v := fun e => h e.symm
          simp [h, h']
      show fsum (fun v => if v' = v then d.mass v else (0 : R)) = d.mass v'
      rw [e]
      have := lsum_indicator_mem (Enum.elems : List V) Enum.nodup v' (d.mass v')
      rw [if_pos (Enum.complete v')] at this
      exact this
    · intro v v' h t
      by_cases hv : v' = v
      · subst hv; simp
      · simp [hv] at h

/-- A median that ignores the data is `e`-DP for every `e ≥ 0`. -/
theorem MedianDP.const {X Y : Type} [Enum Y] (Nbr : X → X → Prop) (d : R → Dist Y R) :
    MedianDP Nbr (fun e (_ : X) => d e) := by
  intro e he _ _ _ S
  have h1 := one_le_exp he
  have := mul_le_mul_right' (Pr (d e) S) h1 (Pr_nonneg (d e) S)
  grind

/-- A utility that ignores the data has sensitivity 0. -/
theorem UtilitySensitivity.const {X Y : Type} (Nbr : X → X → Prop) (f : Y → Int) :
    UtilitySensitivity Nbr (fun (_ : X) y => f y) := by
  intro _ _ y _
  show f y ≤ f y + 1 ∧ f y ≤ f y + 1
  omega

/-- A score that ignores the test set is insensitive to it. -/
theorem TestSensitivity.const {V T : Type} (NbrTe : T → T → Prop) (f : V → Int) (m : Nat) :
    TestSensitivity NbrTe (fun v (_ : T) => f v) m := by
  intro v t t' _
  simp

end

end Odp.Mech
