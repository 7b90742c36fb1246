/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Linking certificates to the proofs: iterative mechanisms (Alg. 3, Lemma 11)

As in every `Link.lean` (e.g. `Odp/Mech/Laplace/Link.lean`), for the two kinds of `mech` row of Alg. 3 whose `δ` is checked:

* `mech iter` (Lemma 11 with basic composition; the row gives the stops `k_1 < … < k_n` and the
  steps as groups `(count, ε, δ)`): **cost link** `iter_cost_link` — the class "stopped after
  `k_i` steps" costs `iterCosts ks eps i = ε_1 + … + ε_{k_i}` and the round's `δ` is
  `iterDeltaBasic ks dl = Σ_i (δ_1 + … + δ_{k_i})`, where `eps`, `dl` are the per-step amounts the
  groups describe, read with `amt D` (`stepList`). **Honesty** `IterBuiltin.odpCost` /
  `iter_honest`: from `Odp.Mech.iter_odp_basic`, whose hypothesis is `StepsDP` (step `k` is
  `(ε_k, δ_k)`-DP for every released history) with exactly those per-step amounts.
* `mech lemma11` (Lemma 11 with any COMP; the row gives per stop `(k_i, ε^{k_i}, δ^{k_i})`):
  **cost link** `lemma11_cost_link` — the class of stop `i` costs `ε^{k_i}` and the round's `δ`
  is at least `Σ_i δ^{k_i}`. **Honesty** `Lemma11Builtin.odpCost` / `lemma11_honest`: from
  `Odp.Certs.Lemma11.lemma11_le` (`Odp.Mech.lemma11` and monotonicity in `δ`), whose hypothesis is
  `PrefixDP` with the row's numbers (each prefix `M^{k_i}` is `(ε^{k_i}, δ^{k_i})`-DP: for privacy
  buckets, the optimal composition and RDP these are numbers computed by tested Python code).

**What stays assumed**: neighbours; that the release is the model's (`iterMech M S rule`: finite
step outputs, deterministic stopping rules); the model's stops are the row's; `StepsDP`
(resp. `PrefixDP`). `mech iter_costs` (δ from OptDel, Theorem 15, not proved) is not linked.
-/
module

public import Odp.Certs.LinkCore
public import Odp.Mech.Iterative.Privacy
public import Odp.Mech.Iterative.Lemma11

@[expose] public section

set_option autoImplicit false

namespace Odp.Certs.Link

open Odp.Core Odp.Core.ExpField Odp.LedgerCore Odp.Mech Odp.Mech.Iter

noncomputable section

variable {R X O : Type} [ExpField R]

/-! ### The `mech` row (over `Nat`) -/

theorem mechOk_iter {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindIter ps gs = true) :
    stopsOk gs ps = true ∧ bs = iterBlocks gs ps ∧ e.delta = iterDelta gs ps := by
  have h' : (stopsOk gs ps && costsAre e bs true (iterBlocks gs ps) (iterDelta gs ps))
      = true := h
  exact ⟨band_left h', costsAre_blocks (band_right h')⟩

/-- With a `blocks` row, a `lemma11` row also has at least one stop, increasing stops. -/
theorem mechOk_lemma11_stops {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindLemma11 ps gs = true) :
    0 < groupsLen gs ∧ stopsAbove 0 gs = true := by
  have h' : (decide (listLen ps = 0) && lemma11Ok e bs true gs) = true := h
  have h2 : (decide (0 < groupsLen gs) && stopsAbove 0 gs && decide (stopDeltas gs ≤ e.delta)
      && listEq bs (stopCosts gs)) = true := band_right h'
  exact ⟨of_decide_eq_true (band_left (band_left (band_left h2))),
    band_right (band_left (band_left h2))⟩

/-! ### Prefix sums of the steps the groups describe -/

/-- The per-step amounts of the groups, in order (`count` copies of each group's `sel`),
read with `amt D`: `[ε_1, ε_2, …]` for `sel = StepGroup.eps`. -/
def stepList (D : Nat) (sel : StepGroup → Nat) : List StepGroup → List R
  | [] => []
  | g :: gs => List.replicate g.count (amt D (sel g)) ++ stepList D sel gs

theorem prefSum_nil_list : ∀ k : Nat, prefSum ([] : List R) k = 0
  | 0 => rfl
  | k + 1 => by
    show prefSum ([] : List R) k + ([] : List R).getD k 0 = 0
    rw [prefSum_nil_list k, List.getD_nil]
    grind

theorem prefSum_cons_succ (x : R) (l : List R) : ∀ k : Nat,
    prefSum (x :: l) (k + 1) = x + prefSum l k
  | 0 => by
    show (0 : R) + (x :: l).getD 0 0 = x + 0
    rw [List.getD_cons_zero]
    grind
  | k + 1 => by
    show prefSum (x :: l) (k + 1) + (x :: l).getD (k + 1) 0 = x + (prefSum l k + l.getD k 0)
    rw [prefSum_cons_succ x l k, List.getD_cons_succ]
    grind

theorem prefSum_replicate_append (a : R) (l : List R) : ∀ (c k : Nat),
    prefSum (List.replicate c a ++ l) k
      = if k ≤ c then natR k * a else natR c * a + prefSum l (k - c)
  | 0, k => by
    rw [List.replicate_zero, List.nil_append]
    by_cases hk : k ≤ 0
    · rw [if_pos hk, show k = 0 by omega, natR_zero]
      show (0 : R) = 0 * a
      grind
    · rw [if_neg hk, natR_zero, Nat.sub_zero]
      grind
  | c + 1, 0 => by
    rw [if_pos (Nat.zero_le _), natR_zero]
    show (0 : R) = 0 * a
    grind
  | c + 1, k + 1 => by
    rw [List.replicate_succ, List.cons_append, prefSum_cons_succ,
      prefSum_replicate_append a l c k]
    by_cases hk : k ≤ c
    · rw [if_pos hk, if_pos (show k + 1 ≤ c + 1 by omega), natR_succ]
      grind
    · rw [if_neg hk, if_neg (show ¬ k + 1 ≤ c + 1 by omega), natR_succ,
        show k + 1 - (c + 1) = k - c by omega]
      grind

/-- The row's prefix sum of the `ε`'s is the prefix sum of the per-step list. -/
theorem amt_prefixEps (D : Nat) : ∀ (gs : List StepGroup) (k acc : Nat),
    (amt D (prefixEps k acc gs) : R) = amt D acc + prefSum (stepList D (fun g => g.eps) gs) k
  | [], k, acc => by
    show (amt D acc : R) = amt D acc + prefSum ([] : List R) k
    rw [prefSum_nil_list]
    grind
  | g :: gs, k, acc => by
    show (amt D (if decide (k ≤ g.count) then acc + k * g.eps
        else prefixEps (k - g.count) (acc + g.count * g.eps) gs) : R)
      = amt D acc
        + prefSum (List.replicate g.count (amt D g.eps) ++ stepList D (fun g => g.eps) gs) k
    rw [prefSum_replicate_append]
    by_cases hk : k ≤ g.count
    · rw [if_pos (decide_eq_true hk), if_pos hk, amt_add, amt_mul_left]
    · rw [if_neg (fun h : decide (k ≤ g.count) = true => hk (of_decide_eq_true h)), if_neg hk,
        amt_prefixEps D gs, amt_add, amt_mul_left]
      generalize (prefSum (stepList (R := R) D (fun g => g.eps) gs) (k - g.count)) = p
      grind

/-- The row's prefix sum of the `δ`'s is the prefix sum of the per-step list. -/
theorem amt_prefixDelta (D : Nat) : ∀ (gs : List StepGroup) (k acc : Nat),
    (amt D (prefixDelta k acc gs) : R)
      = amt D acc + prefSum (stepList D (fun g => g.delta) gs) k
  | [], k, acc => by
    show (amt D acc : R) = amt D acc + prefSum ([] : List R) k
    rw [prefSum_nil_list]
    grind
  | g :: gs, k, acc => by
    show (amt D (if decide (k ≤ g.count) then acc + k * g.delta
        else prefixDelta (k - g.count) (acc + g.count * g.delta) gs) : R)
      = amt D acc
        + prefSum (List.replicate g.count (amt D g.delta) ++ stepList D (fun g => g.delta) gs) k
    rw [prefSum_replicate_append]
    by_cases hk : k ≤ g.count
    · rw [if_pos (decide_eq_true hk), if_pos hk, amt_add, amt_mul_left]
    · rw [if_neg (fun h : decide (k ≤ g.count) = true => hk (of_decide_eq_true h)), if_neg hk,
        amt_prefixDelta D gs, amt_add, amt_mul_left]
      generalize (prefSum (stepList (R := R) D (fun g => g.delta) gs) (k - g.count)) = p
      grind

theorem stepList_length (D : Nat) (sel : StepGroup → Nat) :
    ∀ gs : List StepGroup, (stepList (R := R) D sel gs).length = stepCount gs
  | [] => rfl
  | g :: gs => by
    show (List.replicate g.count (amt D (sel g)) ++ stepList D sel gs).length
      = g.count + stepCount gs
    rw [List.length_append, List.length_replicate, stepList_length D sel gs]

theorem getD_nonneg : ∀ (l : List R), (∀ x ∈ l, 0 ≤ x) → ∀ j, 0 ≤ l.getD j 0
  | [], _, j => by rw [List.getD_nil]; grind
  | x :: l, h, 0 => by rw [List.getD_cons_zero]; exact h x List.mem_cons_self
  | x :: l, h, j + 1 => by
    rw [List.getD_cons_succ]
    exact getD_nonneg l (fun y hy => h y (List.mem_cons_of_mem x hy)) j

theorem stepList_nonneg (D : Nat) (hD : 0 < D) (sel : StepGroup → Nat) :
    ∀ gs : List StepGroup, ∀ x ∈ stepList (R := R) D sel gs, 0 ≤ x
  | [], x, hx => by cases hx
  | g :: gs, x, hx => by
    have hx' : x ∈ List.replicate g.count (amt D (sel g)) ++ stepList D sel gs := hx
    rcases List.mem_append.mp hx' with h | h
    · rw [(List.mem_replicate.mp h).2]
      exact amt_nonneg hD _
    · exact stepList_nonneg D hD sel gs x h

/-! ### The classes of `mech iter` -/

theorem blockAt_iterBlocks (gs : List StepGroup) :
    ∀ (ks : List Nat) (i : Nat) (h : i < ks.length),
      blockAt i (iterBlocks gs ks) = prefixEps (ks.get ⟨i, h⟩) 0 gs
  | [], _, h => absurd h (Nat.not_lt_zero _)
  | _ :: _, 0, _ => rfl
  | _ :: ks, i + 1, h => by
    show blockAt i (iterBlocks gs ks) = _
    rw [blockAt_iterBlocks gs ks i (by simp at h; omega)]
    rfl

theorem listLen_iterBlocks (gs : List StepGroup) :
    ∀ ks : List Nat, listLen (iterBlocks gs ks) = ks.length
  | [] => rfl
  | _ :: ks => by
    show listLen (iterBlocks gs ks) + 1 = ks.length + 1
    rw [listLen_iterBlocks gs ks]

theorem amt_iterDelta (D : Nat) (gs : List StepGroup) :
    ∀ ks : List Nat, (amt D (iterDelta gs ks) : R)
      = iterDeltaBasic ks (stepList D (fun g => g.delta) gs)
  | [] => amt_zero D
  | k :: ks => by
    have ih := amt_iterDelta D gs ks
    have hk := amt_prefixDelta (R := R) D gs k 0
    show (amt D (prefixDelta k 0 gs + iterDelta gs ks) : R)
      = lsum (k :: ks) (prefSum (stepList D (fun g => g.delta) gs))
    rw [amt_add, ih, hk, amt_zero, lsum_cons]
    unfold iterDeltaBasic
    generalize stepList (R := R) D (fun g => g.delta) gs = L
    generalize prefSum L k = a
    generalize lsum ks (prefSum L) = b
    grind

/-- **Cost link, `mech iter`** (Lemma 11 with basic composition): an accepted row with stops
`ks` and step groups `gs` lists the class of stop `i` at `iterCosts ks eps i` and has
`δ = iterDeltaBasic ks dl`, for the per-step amounts `eps`, `dl` that the groups describe; every
stop is at most the number of steps. -/
theorem iter_cost_link (D : Nat) {e : Entry} {bs ks : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindIter ks gs = true) :
    (∀ i : Fin ks.length, (amt D (blockAt i.val bs) : R)
      = iterCosts ks (stepList D (fun g => g.eps) gs) i) ∧
      (amt D e.delta : R) = iterDeltaBasic ks (stepList D (fun g => g.delta) gs) ∧
      listLen bs = ks.length ∧ (∀ i : Fin ks.length, ks.get i ≤ stepCount gs) := by
  obtain ⟨hst, hb, hd⟩ := mechOk_iter h
  have hmax : listMax ks = stepCount gs := of_decide_eq_true (band_right hst)
  refine ⟨fun i => ?_, by rw [hd]; exact amt_iterDelta D gs ks,
    by rw [hb]; exact listLen_iterBlocks gs ks, fun i => ?_⟩
  · rw [hb, blockAt_iterBlocks gs ks i.val i.isLt, amt_prefixEps, amt_zero]
    show (0 : R) + prefSum (stepList D (fun g => g.eps) gs) (ks.get i)
      = prefSum (stepList D (fun g => g.eps) gs) (ks.get i)
    generalize prefSum (stepList (R := R) D (fun g => g.eps) gs) (ks.get i) = p
    grind
  · have h2 := blockAt_le_listMax ks i.val
    rw [blockAt_eq_get ks i.val i.isLt, hmax] at h2
    exact h2

/-- The guarantee of Alg. 3 with basic composition (`iter_odp_basic`) in the certificate's
terms. -/
theorem iter_model_odpCost {W : Type} [Enum W] (Nbr : X → X → Prop) (D : Nat) (hD : 0 < D)
    (M : Step X W R) (S : Stops) (rule : Fin S.ks.length → List W → Bool) (gs : List StepGroup)
    (hsteps : StepsDP Nbr M (stepList D (fun g => g.eps) gs) (stepList D (fun g => g.delta) gs))
    {en : Entry} {bs : List Nat} (h : mechOk en bs true kindIter S.ks gs = true) :
    ODPcost Nbr (iterMech M S rule) (fun o => amt D (blockAt o.1.val bs)) (amt D en.delta) := by
  have hl := iter_cost_link (R := R) D h
  have hK : S.ks.get S.last ≤ (stepList (R := R) D (fun g => g.eps) gs).length := by
    rw [stepList_length]
    exact hl.2.2.2 S.last
  have h1 := (ODP_iff_ODPcost Nbr _ Sigma.fst _ _).mp
    (iter_odp_basic Nbr M S rule (stepList D (fun g => g.eps) gs)
      (stepList D (fun g => g.delta) gs)
      (getD_nonneg _ (stepList_nonneg D hD _ gs)) (getD_nonneg _ (stepList_nonneg D hD _ gs))
      hK hsteps)
  exact odpCost_congr h1 (fun o => (hl.1 o.1).symm) hl.2.1.symm

/-- A request that is a round of an **iterative mechanism with early stopping** under Lemma 11
with basic composition (`iterMech M S rule`, odp's default `Lemma11(BasicComposition())`): it
releases `f` of the output, labels an output by its stop index (`o.1`, the position of
"stopped after `k_i` steps" in the certificate's order), and its rows pass `mech iter` with the
model's stops `S.ks` and step groups `gs`. Carried hypothesis: `StepsDP` with the per-step
amounts the groups describe. -/
inductive IterBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro {W : Type} [Enum W] (M : Step X W R) (S : Stops) (rule : Fin S.ks.length → List W → Bool)
      (gs : List StepGroup)
      (hsteps : StepsDP Nbr M (stepList D (fun g => g.eps) gs) (stepList D (fun g => g.delta) gs))
      (f : IterOut W S.ks → O) (hreal : Realizes r (iterMech M S rule) f (fun o => o.1.val))
      (hrow : mechOk r.rowEntry r.blocks true kindIter S.ks gs = true)

theorem IterBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat} (hD : 0 < D)
    {r : Request X O R} (h : IterBuiltin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨M, S, rule, gs, hsteps, f, hreal, hrow⟩ := h
  exact odp_of_realizes Nbr D hreal (iter_model_odpCost Nbr D hD M S rule gs hsteps hrow)

/-- **Honesty, `mech iter`, on the model's own output type**. -/
theorem iter_honest {W : Type} [Enum W] (Nbr : X → X → Prop) (D : Nat)
    (hD : 0 < D) (M : Step X W R) (S : Stops) (rule : Fin S.ks.length → List W → Bool)
    (gs : List StepGroup)
    (hsteps : StepsDP Nbr M (stepList D (fun g => g.eps) gs) (stepList D (fun g => g.delta) gs))
    (r : Request X (IterOut W S.ks) R) (hM : r.M = iterMech M S rule)
    (hb : ∀ o, r.block o = o.1.val)
    (hrow : mechOk r.rowEntry r.blocks true kindIter S.ks gs = true)
    (hsup : r.supEps = listMax r.blocks) (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  classical
  have hodp := IterBuiltin.odpCost hD
    (IterBuiltin.intro M S rule gs hsteps (fun o => o) (realizes_self hM hb) hrow)
  refine honest_of Nbr D r hN hodp hsup (fun o => ?_)
  rw [hb o, (iter_cost_link (R := R) D hrow).2.2.1]
  exact o.1.isLt

/-! ### `mech lemma11` -/

/-- `0, 1, …, n − 1`. -/
def finUp : (n : Nat) → List (Fin n)
  | 0 => []
  | n + 1 => ⟨0, Nat.zero_lt_succ n⟩ :: (finUp n).map Fin.succ

theorem finUp_complete : ∀ (n : Nat) (i : Fin n), i ∈ finUp n
  | 0, i => i.elim0
  | n + 1, i => by
    cases i using Fin.cases with
    | zero => exact List.mem_cons_self
    | succ j => exact List.mem_cons_of_mem _ (List.mem_map_of_mem (finUp_complete n j))

theorem nodup_map_succ {n : Nat} : ∀ l : List (Fin n), l.Nodup → (l.map Fin.succ).Nodup
  | [], _ => List.nodup_nil
  | a :: l, h => by
    rw [List.nodup_cons] at h
    rw [List.map_cons, List.nodup_cons]
    refine ⟨?_, nodup_map_succ l h.2⟩
    intro hm
    obtain ⟨b, hb, he⟩ := List.mem_map.mp hm
    exact h.1 (Fin.succ_inj.mp he ▸ hb)

theorem finUp_nodup : ∀ n : Nat, (finUp n).Nodup
  | 0 => List.nodup_nil
  | n + 1 => by
    show (⟨0, Nat.zero_lt_succ n⟩ :: (finUp n).map Fin.succ).Nodup
    rw [List.nodup_cons]
    refine ⟨?_, nodup_map_succ _ (finUp_nodup n)⟩
    intro hm
    obtain ⟨b, _, he⟩ := List.mem_map.mp hm
    exact Fin.succ_ne_zero b he

theorem lsum_finUp_blockAt (D : Nat) : ∀ (l : List Nat),
    lsum (finUp l.length) (fun i => (amt D (blockAt i.val l) : R)) = amt D (listSum l)
  | [] => by
    show (0 : R) = amt D 0
    rw [amt_zero]
  | x :: l => by
    show (amt D (blockAt 0 (x :: l)) : R)
        + lsum ((finUp l.length).map Fin.succ) (fun i => amt D (blockAt i.val (x :: l)))
      = amt D (x + listSum l)
    have hmap : ∀ t : List (Fin l.length),
        lsum (t.map Fin.succ) (fun i => (amt D (blockAt i.val (x :: l)) : R))
          = lsum t (fun i => amt D (blockAt i.val l)) := by
      intro t
      induction t with
      | nil => rfl
      | cons i t ih =>
        rw [List.map_cons, lsum_cons, lsum_cons, ih]
        rfl
    rw [amt_add, ← lsum_finUp_blockAt D l, hmap]
    rfl

theorem stopCosts_length : ∀ gs : List StepGroup, listLen (stopCosts gs) = gs.length
  | [] => rfl
  | _ :: gs => by
    show listLen (stopCosts gs) + 1 = gs.length + 1
    rw [stopCosts_length gs]

theorem listSum_stopDeltas : ∀ gs : List StepGroup, listSum (gs.map StepGroup.delta) = stopDeltas gs
  | [] => rfl
  | g :: gs => by
    show g.delta + listSum (gs.map StepGroup.delta) = g.delta + stopDeltas gs
    rw [listSum_stopDeltas gs]

/-- The stop `δ`'s of a `lemma11` row, summed over the stops, read with `amt D`. -/
theorem fsum_stopDeltas (D : Nat) (gs : List StepGroup) (n : Nat) (hn : n = gs.length) :
    fsum (fun i : Fin n => (amt D (blockAt i.val (gs.map StepGroup.delta)) : R))
      = amt D (stopDeltas gs) := by
  rw [fsum_eq_lsum (finUp n) (finUp_nodup n) (finUp_complete n)]
  have hl : n = (gs.map StepGroup.delta).length := by rw [List.length_map]; exact hn
  subst hl
  rw [lsum_finUp_blockAt, listSum_stopDeltas]

/-- **Cost link, `mech lemma11`** (Lemma 11 with any COMP): an accepted row with per-stop
`(k_i, ε^{k_i}, δ^{k_i})` lists the class of stop `i` at `ε^{k_i}`, and the round's `δ` covers
`Σ_i δ^{k_i}`. -/
theorem lemma11_cost_link (D : Nat) (hD : 0 < D) {e : Entry} {bs ps : List Nat}
    {gs : List StepGroup} (h : mechOk e bs true kindLemma11 ps gs = true) :
    (∀ i, (amt D (blockAt i bs) : R) = amt D (blockAt i (stopCosts gs))) ∧
      (amt D (stopDeltas gs) : R) ≤ amt D e.delta ∧ listLen bs = gs.length := by
  obtain ⟨hb, hd⟩ := mechOk_lemma11 h
  refine ⟨fun i => by rw [hb], amt_le hD hd, by rw [hb]; exact stopCosts_length gs⟩

/-- A request that is a round of an **iterative mechanism with early stopping** under Lemma 11
with any COMP (`iterMech M S rule`; privacy buckets, the optimal composition, RDP): it releases
`f` of the output, labels an output by its stop index, and its rows pass `mech lemma11` with
per-stop `(k_i, ε^{k_i}, δ^{k_i})` whose stops are the model's. Carried hypothesis: `PrefixDP`
with the row's `ε^{k_i}`, `δ^{k_i}` (read with `amt D`). -/
inductive Lemma11Builtin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro {W : Type} [Enum W] (M : Step X W R) (S : Stops) (rule : Fin S.ks.length → List W → Bool)
      (gs : List StepGroup) (hks : S.ks = gs.map StepGroup.count)
      (hcomp : PrefixDP Nbr M S.ks (fun i => amt D (blockAt i.val (stopCosts gs)))
        (fun i => amt D (blockAt i.val (gs.map StepGroup.delta))))
      (f : IterOut W S.ks → O) (hreal : Realizes r (iterMech M S rule) f (fun o => o.1.val))
      (hrow : mechOk r.rowEntry r.blocks true kindLemma11 [] gs = true)

/-- Lemma 11 (`lemma11_le`) in the certificate's terms. -/
theorem lemma11_model_odpCost {W : Type} [Enum W] (Nbr : X → X → Prop) (D : Nat) (hD : 0 < D)
    (M : Step X W R) (S : Stops) (rule : Fin S.ks.length → List W → Bool) (gs : List StepGroup)
    (hks : S.ks = gs.map StepGroup.count)
    (hcomp : PrefixDP Nbr M S.ks (fun i => amt D (blockAt i.val (stopCosts gs)))
      (fun i => amt D (blockAt i.val (gs.map StepGroup.delta))))
    {en : Entry} {bs : List Nat} (h : mechOk en bs true kindLemma11 [] gs = true) :
    ODPcost Nbr (iterMech M S rule) (fun o => amt D (blockAt o.1.val bs)) (amt D en.delta) := by
  have hl := lemma11_cost_link (R := R) D hD h
  have hlen : S.ks.length = gs.length := by rw [hks, List.length_map]
  have hsum := fsum_stopDeltas (R := R) D gs S.ks.length hlen
  have h1 := (ODP_iff_ODPcost Nbr _ Sigma.fst _ _).mp
    (Odp.Certs.Lemma11.lemma11_le Nbr M S rule _ _ (δ := amt D en.delta) hcomp
      (by rw [hsum]; exact hl.2.1))
  exact odpCost_congr h1 (fun o => (hl.1 o.1.val).symm) rfl

theorem Lemma11Builtin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    (hD : 0 < D) {r : Request X O R} (h : Lemma11Builtin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨M, S, rule, gs, hks, hcomp, f, hreal, hrow⟩ := h
  exact odp_of_realizes Nbr D hreal (lemma11_model_odpCost Nbr D hD M S rule gs hks hcomp hrow)

/-- **Honesty, `mech lemma11`, on the model's own output type**. -/
theorem lemma11_honest {W : Type} [Enum W] (Nbr : X → X → Prop) (D : Nat)
    (hD : 0 < D) (M : Step X W R) (S : Stops) (rule : Fin S.ks.length → List W → Bool)
    (gs : List StepGroup) (hks : S.ks = gs.map StepGroup.count)
    (hcomp : PrefixDP Nbr M S.ks (fun i => amt D (blockAt i.val (stopCosts gs)))
      (fun i => amt D (blockAt i.val (gs.map StepGroup.delta))))
    (r : Request X (IterOut W S.ks) R) (hM : r.M = iterMech M S rule)
    (hb : ∀ o, r.block o = o.1.val)
    (hrow : mechOk r.rowEntry r.blocks true kindLemma11 [] gs = true)
    (hsup : r.supEps = listMax r.blocks) (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  classical
  have hodp := Lemma11Builtin.odpCost hD
    (Lemma11Builtin.intro M S rule gs hks hcomp (fun o => o) (realizes_self hM hb) hrow)
  refine honest_of Nbr D r hN hodp hsup (fun o => ?_)
  have hlen : S.ks.length = gs.length := by rw [hks, List.length_map]
  rw [hb o, (lemma11_cost_link (R := R) D hD hrow).2.2, ← hlen]
  exact o.1.isLt

end

end Odp.Certs.Link
