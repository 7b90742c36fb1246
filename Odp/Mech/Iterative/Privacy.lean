/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# The ODP guarantee of iterative mechanisms with early stopping (Hartmann et al. 2022, Sec. 5)

The model of Alg. 3 (`iterMech M S rule`: adaptive steps `M`, stops `S.ks = [k_1, …, k_n]`,
deterministic stopping rules `rule`, finite step outputs, output = the released history with its
stop index, partition `P_i` = "stopped after `k_i` steps" = `Sigma.fst`) is in
`Odp/Mech/Iterative/Model.lean`; the hypotheses are in the trust boundary `Odp/Mech/Common/Noise.lean`.

**What is proved.**

* `Odp.Mech.lemma11` — **Lemma 11**, general COMP form: if for every stop `i` the prefix
  mechanism `M^{k_i} = (M_1, …, M_{k_i})` is `(ε^{k_i}, δ^{k_i})`-DP (`PrefixDP`, the COMP
  hypothesis), then `M_iter` is `(𝒫, ℰ, Σ_i δ^{k_i})`-ODP with `ℰ(P_i) = ε^{k_i}`. Proof as in the
  paper: for `S ⊆ P_i`, `Pr(M_iter(x) ∈ S) = Pr(M^{k_i}(x) ∈ S ∩ {h : Alg. 3 stops at h})`, the
  stopping rules being deterministic, so `M_iter` is `(P_i, ε^{k_i}, δ^{k_i})`-subset DP; then
  Lemma 6 (`odp_of_subsetDP`). This covers every δ rule of `odp.composition.Lemma11`: with
  `BucketsComposition` (privacy buckets, or the optimal KOV composition as `approximate_dp`
  worst case) the `δ^{k_i}` are numbers computed by tested Python code, and `PrefixDP` with
  them is the hypothesis.
* `Odp.Mech.iter_odp_basic` — **Lemma 11 with basic composition as COMP** (odp's default rule
  `Lemma11(BasicComposition())`): from each step's `(ε_k, δ_k)`-DP alone (`StepsDP`), `M_iter` is
  `(𝒫, iterCosts ks eps, iterDeltaBasic ks dl)`-ODP: `ℰ(P_i) = Σ_{k ≤ k_i} ε_k`,
  `δ = Σ_i Σ_{k ≤ k_i} δ_k` (basic composition is `Odp.Mech.basic_composition`, from Theorem 7).
  `iter_odp_basic_costs`: the same δ for declared costs `ℰ(P_i) ≥ Σ_{k ≤ k_i} ε_k` (odp's
  `costs=` argument). `iter_odpCost_basic` is `iter_odp_basic` in the output-wise form that a
  round of Alg. 1 takes (`Choice.cost`), so Theorem 7 applies to a run that contains the
  iterative mechanism.
* `block_iff_length` — for strictly increasing stops, block `i` is exactly the histories of length
  `k_i`: the partition is the paper's `P_i = {s | |s| = k_i}` (odp's `output_length`).
* `Odp.Mech.noisyStep_dp` — a step of `NoisyGradientDescent` (independent noise on each of the
  `d` integer coordinates of the gridded gradient) is `(ε, 0)`-DP from the per-coordinate
  shift domination of the noise (`ShiftDominated N r`) and the L1 sensitivity `m` of the gridded
  gradient (`L1Sensitive`), when `m·r ≤ ε` (odp: `r = ε/m`, the noise scale being `m/ε`). The
  product of the per-coordinate ratios is `e^{r Σ_j |u_j − u'_j|} ≤ e^{m r}`.
* `Odp.Mech.noisyGD_odp` — `NoisyGradientDescent`: `(𝒫, ℰ(P_i) = k_i·ε, 0)`-ODP.

**Narrower than the paper / the code (and why).**

* Step outputs lie in a finite type (the Core's Definitions need finite output spaces): the
  theorems cover odp's mechanisms whose step releases are clamped to a declared window.
  `NoisyGradientDescent` at this commit does not clamp (see the trust boundary file): the
  countable case would follow by a limit over windows, which is not formalised.
* The stopping rules are deterministic functions of the released history (the paper's w.l.o.g.;
  odp's `stopping_rule(history)` is one). A randomised or data-dependent rule must be made a step.
* Basic composition needs `ε_k, δ_k ≥ 0` (as odp's `StepSpec` enforces) and a description of every
  step up to the last stop (`k_n ≤ |eps|`, as `odp.composition.expand_steps` enforces).
* Not proved: Theorem 15 (OptDel, the optimal δ of Sec. 5.2 / App. C). It needs the simulation of
  every `(ε, δ)`-DP step by randomized response (Lemma 12, from Kairouz, Oh, Viswanath 2015), which is not available
  here; odp's `OptDel` rule stays a tested numerical computation, and `lemma11` does not cover it.
* The stops need only be nondecreasing (the paper: strictly increasing), a generalisation.
-/
module

public import Odp.Mech.Iterative.Composition

@[expose] public section

set_option autoImplicit false

namespace Odp.Mech.Iter

open Odp.Core Odp.Core.ExpField

noncomputable section

variable {R X W : Type} [ExpField R] [Enum W]

/-! ### Lemma 11 -/

open Classical in
/-- For an event inside the block `P_i`, Alg. 3's probability is the prefix mechanism's
probability of that event intersected with "Alg. 3 stops at stop `i`". -/
theorem iter_pr_block (M : Step X W R) (S : Stops) (rule : Fin S.ks.length → List W → Bool)
    (i : Fin S.ks.length) (T : Event (IterOut W S.ks))
    (hT : ∀ o, T o = true → decide (o.1 = i) = true) (y : X) :
    Pr (iterMech M S rule y) T
      = Pr (prefixMech M (S.ks.get i) y)
          (fun h => T ⟨i, h⟩ && decide (Stopped S.ks rule i h.1)) := by
  unfold Pr
  rw [fsum_sigma]
  rw [fsum_eq_single i]
  · apply fsum_congr
    intro h
    show (if T ⟨i, h⟩ = true then
        chain M y [] h.1 * (if Stopped S.ks rule i h.1 then 1 else 0) else 0)
      = (if (T ⟨i, h⟩ && decide (Stopped S.ks rule i h.1)) = true then chain M y [] h.1 else 0)
    by_cases hs : Stopped S.ks rule i h.1
    · rw [if_pos hs]
      cases T ⟨i, h⟩ <;> simp [hs] <;> grind
    · rw [if_neg hs]
      cases T ⟨i, h⟩ <;> simp [hs] <;> grind
  · intro j hj
    refine Eq.trans (fsum_congr (g := fun _ => (0 : R)) ?_) fsum_zero
    intro h
    have hf : T ⟨j, h⟩ = false := by
      cases hc : T ⟨j, h⟩
      · rfl
      · have := hT ⟨j, h⟩ hc
        simp only [decide_eq_true_eq] at this
        exact absurd this hj
    rw [hf]
    simp

/-- **Lemma 11.** If the prefix mechanism `M^{k_i}` is `(ε^{k_i}, δ^{k_i})`-DP for every stop `i`
(the COMP hypothesis `PrefixDP`), then Alg. 3 is `(𝒫, ℰ, Σ_i δ^{k_i})`-ODP with
`ℰ(P_i) = ε^{k_i}`, for the partition `𝒫` by the stop index. -/
theorem _root_.Odp.Mech.lemma11 (Nbr : X → X → Prop) (M : Step X W R) (S : Stops)
    (rule : Fin S.ks.length → List W → Bool) (epsK delK : Fin S.ks.length → R)
    (hcomp : PrefixDP Nbr M S.ks epsK delK) :
    ODP Nbr (iterMech M S rule) Sigma.fst epsK (fsum delK) := by
  apply odp_of_subsetDP
  intro i x x' hN T hT
  rw [iter_pr_block M S rule i T hT x, iter_pr_block M S rule i T hT x']
  exact hcomp i x x' hN _

/-- **Lemma 11 with basic composition as COMP** (odp's default `Lemma11(BasicComposition())`):
if step `k` is `(ε_k, δ_k)`-DP for every released history, Alg. 3 is
`(𝒫, ℰ, δ)`-ODP with `ℰ(P_i) = Σ_{k ≤ k_i} ε_k` (`iterCosts`) and
`δ = Σ_i Σ_{k ≤ k_i} δ_k` (`iterDeltaBasic`). -/
theorem _root_.Odp.Mech.iter_odp_basic (Nbr : X → X → Prop) (M : Step X W R) (S : Stops)
    (rule : Fin S.ks.length → List W → Bool) (eps dl : List R)
    (heps : ∀ j, 0 ≤ eps.getD j 0) (hdl : ∀ j, 0 ≤ dl.getD j 0)
    (hK : S.ks.get S.last ≤ eps.length) (hsteps : StepsDP Nbr M eps dl) :
    ODP Nbr (iterMech M S rule) Sigma.fst (Odp.Mech.iterCosts S.ks eps)
      (Odp.Mech.iterDeltaBasic S.ks dl) := by
  rw [← fsum_iterDelta]
  exact Odp.Mech.lemma11 Nbr M S rule _ _
    (Odp.Mech.prefixDP_basic Nbr M S.ks eps dl heps hdl hsteps
      (fun i => Nat.le_trans (S.le_last i) hK))

/-- `iter_odp_basic` with declared costs `ℰ(P_i) = E i ≥ Σ_{k ≤ k_i} ε_k` (odp's
`IterativeMechanism(costs=…)` with `Lemma11(BasicComposition())`, which refuses a cost below the
prefix sum): the same δ. -/
theorem _root_.Odp.Mech.iter_odp_basic_costs (Nbr : X → X → Prop) (M : Step X W R) (S : Stops)
    (rule : Fin S.ks.length → List W → Bool) (eps dl : List R) (E : Fin S.ks.length → R)
    (hE : ∀ i, Odp.Mech.iterCosts S.ks eps i ≤ E i)
    (heps : ∀ j, 0 ≤ eps.getD j 0) (hdl : ∀ j, 0 ≤ dl.getD j 0)
    (hK : S.ks.get S.last ≤ eps.length) (hsteps : StepsDP Nbr M eps dl) :
    ODP Nbr (iterMech M S rule) Sigma.fst E (Odp.Mech.iterDeltaBasic S.ks dl) := by
  rw [← fsum_iterDelta]
  apply Odp.Mech.lemma11 Nbr M S rule E _
  intro i x x' hN T
  have h := Odp.Mech.prefixDP_basic Nbr M S.ks eps dl heps hdl hsteps
    (fun i => Nat.le_trans (S.le_last i) hK) i x x' hN T
  have h1 := exp_le_exp _ _ (hE i)
  have h2 := mul_le_mul_right' (Pr (prefixMech M (S.ks.get i) x') T) h1 (Pr_nonneg _ _)
  generalize Pr (prefixMech M (S.ks.get i) x) T = a at h ⊢
  generalize Pr (prefixMech M (S.ks.get i) x') T = b at h h2 ⊢
  generalize exp (Odp.Mech.iterCosts S.ks eps i) = c at h h2
  grind

/-- `iter_odp_basic` in the output-wise form (`cost o = ℰ(P_i)` for `o ∈ P_i`), the form of a
round of Alg. 1 (`Odp.Core.Choice`): Theorem 7 applies to runs that contain Alg. 3. -/
theorem _root_.Odp.Mech.iter_odpCost_basic (Nbr : X → X → Prop) (M : Step X W R) (S : Stops)
    (rule : Fin S.ks.length → List W → Bool) (eps dl : List R)
    (heps : ∀ j, 0 ≤ eps.getD j 0) (hdl : ∀ j, 0 ≤ dl.getD j 0)
    (hK : S.ks.get S.last ≤ eps.length) (hsteps : StepsDP Nbr M eps dl) :
    ODPcost Nbr (iterMech M S rule) (fun o => Odp.Mech.iterCosts S.ks eps o.1)
      (Odp.Mech.iterDeltaBasic S.ks dl) :=
  (ODP_iff_ODPcost Nbr _ Sigma.fst _ _).mp
    (Odp.Mech.iter_odp_basic Nbr M S rule eps dl heps hdl hK hsteps)

/-! ### The partition by the stop index is the paper's partition by length -/

/-- The stops are strictly increasing (the paper's `k_1 < … < k_n`). -/
def Stops.Strict (S : Stops) : Prop :=
  ∀ i j : Fin S.ks.length, i.val < j.val → S.ks.get i < S.ks.get j

omit [Enum W] in
/-- For strictly increasing stops an output is in block `P_i` iff its history has length `k_i`:
the partition `Sigma.fst` is the paper's `P_i = {s | |s| = k_i}` (and odp's `output_length`). -/
theorem block_iff_length (S : Stops) (hS : S.Strict) (o : IterOut W S.ks) (i : Fin S.ks.length) :
    o.1 = i ↔ o.2.1.length = S.ks.get i := by
  constructor
  · intro h
    subst h
    exact o.2.2
  · intro h
    rw [o.2.2] at h
    apply Fin.ext
    apply Classical.byContradiction
    intro hne
    rcases Nat.lt_or_gt_of_ne hne with hlt | hlt
    · have := hS _ _ hlt; omega
    · have := hS _ _ hlt; omega

/-! ### The steps of `NoisyGradientDescent` -/

/-- Pointwise ratio `≤ e^ε` gives `(ε, 0)`-DP for one pair of distributions. -/
theorem pr_le_of_pointwise {O : Type} [Enum O] (p q : Dist O R) (ε : R)
    (h : ∀ o, p.mass o ≤ exp ε * q.mass o) (S : Event O) :
    Pr p S ≤ exp ε * Pr q S + 0 := by
  unfold Pr
  rw [← fsum_mul_left]
  have h1 : fsum (fun o => if S o = true then p.mass o else 0)
      ≤ fsum (fun o => exp ε * if S o = true then q.mass o else 0) := by
    apply fsum_le
    intro o
    cases S o
    · simp; grind
    · simp; exact h o
  generalize fsum (fun o => if S o = true then p.mass o else 0) = a at h1 ⊢
  generalize fsum (fun o => exp ε * if S o = true then q.mass o else 0) = b at h1 ⊢
  grind

/-- Independent shift-dominated noise on each coordinate: a shift of the centre by `u − u'`
costs `e^{r ‖u − u'‖₁}`. -/
theorem prodMass_le {C : Type} [Enum C] (N : Int → Dist C R) (r : R) (hr : 0 ≤ r)
    (hN : ShiftDominated N r) : ∀ (v : List C) (u u' : List Int),
      prodMass N u v ≤ exp (natR (l1 v.length u u') * r) * prodMass N u' v
  | [], u, u' => by
    show (1 : R) ≤ exp (natR 0 * r) * 1
    rw [natR_zero, show (0 : R) * r = 0 by grind, exp_zero]
    grind
  | c :: v, u, u' => by
    show (N (u.headD 0)).mass c * prodMass N u.tail v
      ≤ exp (natR ((u.headD 0 - u'.headD 0).natAbs + l1 v.length u.tail u'.tail) * r)
        * ((N (u'.headD 0)).mass c * prodMass N u'.tail v)
    rw [natR_add, show ∀ a b : R, (a + b) * r = a * r + b * r from fun a b => by grind, exp_add]
    have h1 := hN (u.headD 0) (u'.headD 0) c
    have h2 := prodMass_le N r hr hN v u.tail u'.tail
    have ha := (N (u.headD 0)).nonneg c
    have hb := prodMass_nonneg N v u.tail
    have hb' := prodMass_nonneg N v u'.tail
    have ha' := (N (u'.headD 0)).nonneg c
    generalize (N (u.headD 0)).mass c = a at h1 ha ⊢
    generalize (N (u'.headD 0)).mass c = a' at h1 ha' ⊢
    generalize prodMass N u.tail v = b at h2 hb ⊢
    generalize prodMass N u'.tail v = b' at h2 hb' ⊢
    generalize exp (natR (u.headD 0 - u'.headD 0).natAbs * r) = A at h1 ⊢
    generalize exp (natR (l1 v.length u.tail u'.tail) * r) = B at h2 ⊢
    -- a·b ≤ (A a')·b ≤ (A a')·(B b')
    have i1 : a * b ≤ (A * a') * b := mul_le_mul_right' b h1 hb
    have hAa' : 0 ≤ A * a' := le_trans' ha h1
    have i2 : (A * a') * b ≤ (A * a') * (B * b') := mul_le_mul_left' (A * a') h2 hAa'
    grind

/-- **A step of `NoisyGradientDescent` is `(ε, 0)`-DP**, for every released history, from the
per-coordinate shift domination of the noise (rate `r`) and the L1 sensitivity `m` of the gridded
gradient, when `m·r ≤ ε`. -/
theorem _root_.Odp.Mech.noisyStep_dp {C : Type} [Enum C] (Nbr : X → X → Prop)
    (N : Int → Dist C R) (d : Nat) (g : List (Vec C d) → X → Vec Int d) (r ε : R) (m : Nat)
    (hr : 0 ≤ r) (hN : ShiftDominated N r) (hg : L1Sensitive Nbr d g m) (hε : natR m * r ≤ ε)
    (h : List (Vec C d)) : DP Nbr (noisyStep N d g h) ε 0 := by
  intro x x' hx S
  apply pr_le_of_pointwise
  intro v
  show prodMass N (g h x).1 v.1 ≤ exp ε * prodMass N (g h x').1 v.1
  have h1 := prodMass_le N r hr hN v.1 (g h x).1 (g h x').1
  rw [v.2] at h1
  have hl := natR_le (R := R) (hg h x x' hx)
  have h2 : exp (natR (l1 d (g h x).1 (g h x').1) * r) ≤ exp ε := by
    apply exp_le_exp
    have := mul_le_mul_right' r hl hr
    grind
  have h3 := mul_le_mul_right' (prodMass N (g h x').1 v.1) h2 (prodMass_nonneg N v.1 _)
  grind

theorem getD_replicate {α : Type} (K : Nat) (a d : α) :
    ∀ j, (List.replicate K a).getD j d = (if j < K then a else d) := by
  induction K with
  | zero => intro j; simp
  | succ K ih =>
    intro j
    cases j with
    | zero => simp [List.replicate_succ]
    | succ j =>
      rw [List.replicate_succ, List.getD_cons_succ, ih j]
      by_cases hj : j < K
      · rw [if_pos hj, if_pos (by omega)]
      · rw [if_neg hj, if_neg (by omega)]

theorem prefSum_replicate (K : Nat) (a : R) :
    ∀ k, k ≤ K → prefSum (List.replicate K a) k = natR k * a
  | 0, _ => by rw [prefSum_zero, natR_zero]; grind
  | k + 1, hk => by
    rw [prefSum_succ, prefSum_replicate K a k (by omega), getD_replicate, if_pos (by omega),
      natR_succ]
    grind

theorem prefSum_nil (k : Nat) : prefSum ([] : List R) k = 0 := by
  induction k with
  | zero => rfl
  | succ k ih => rw [prefSum_succ, ih, List.getD_nil]; grind

/-- **`NoisyGradientDescent`** (the example of Sec. 5): every step `(ε, 0)`-DP by
`noisyStep_dp`, so by Lemma 11 with basic composition the mechanism is
`(𝒫, ℰ(P_i) = k_i·ε, 0)`-ODP. -/
theorem _root_.Odp.Mech.noisyGD_odp {C : Type} [Enum C] (Nbr : X → X → Prop)
    (N : Int → Dist C R) (d : Nat) (g : List (Vec C d) → X → Vec Int d) (r ε : R) (m : Nat)
    (hr : 0 ≤ r) (hN : ShiftDominated N r) (hg : L1Sensitive Nbr d g m) (hε : natR m * r ≤ ε)
    (hε0 : 0 ≤ ε) (S : Stops) (rule : Fin S.ks.length → List (Vec C d) → Bool) :
    ODP Nbr (iterMech (noisyStep N d g) S rule) Sigma.fst (fun i => natR (S.ks.get i) * ε) 0 := by
  let K := S.ks.get S.last
  have hsteps : StepsDP Nbr (noisyStep N d g) (List.replicate K ε) [] := by
    intro h hlen
    rw [getD_replicate, if_pos (by simpa using hlen), List.getD_nil]
    exact Odp.Mech.noisyStep_dp Nbr N d g r ε m hr hN hg hε h
  have hodp := Odp.Mech.iter_odp_basic Nbr (noisyStep N d g) S rule (List.replicate K ε) []
    (fun j => by rw [getD_replicate]; split <;> grind)
    (fun j => by rw [List.getD_nil]; grind)
    (by simp [K]) hsteps
  have hc : Odp.Mech.iterCosts S.ks (List.replicate K ε) = fun i => natR (S.ks.get i) * ε := by
    funext i
    exact prefSum_replicate K ε (S.ks.get i) (S.le_last i)
  have hd : Odp.Mech.iterDeltaBasic S.ks ([] : List R) = 0 := by
    unfold Odp.Mech.iterDeltaBasic
    rw [lsum_congr S.ks (fun k _ => prefSum_nil k), lsum_zero]
  rw [hc, hd] at hodp
  exact hodp

end

end Odp.Mech.Iter
