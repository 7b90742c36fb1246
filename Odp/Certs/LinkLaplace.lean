/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Linking certificates to the proofs: M_toy, the grid Laplace and Gaussian, randomized response, SVT

For each of these kinds of `mech` row (`Odp.LedgerCore.mechOk`):

1. **Cost link** (`toy_cost_link`, `svt_cost_link`, …): if `mechOk` accepts the round's rows with
   the row's parameters `ps` (natural numbers in units of `1/D`), then the round's blocks, read in
   `R` with `amt D`, are the cost function that `Odp/Mech` proves the guarantee for, evaluated at
   the parameters read with `amt D`, in the certificate's class order — M_toy (values, ⊥):
   `amt D (blockAt (toyIndex b) bs) = toyCosts (amt D e) b`; SVT (`c' = 0 … c` ⊤ answers):
   `amt D (blockAt c' bs) = svtCosts c (amt D e1) (amt D e2) c'` — and the round's `δ` is the
   mechanism's (0, or the Gaussian's `δ`).
2. **The model's guarantee in the certificate's terms** (`toy_model_odpCost`, …): the Mech
   theorem (`toy_odp`, `laplace_dp`, `gaussian_dp`, `rr_dp`, `svt_odp`), Lemma 3 where the
   guarantee is DP, the cost link and `ODP_iff_ODPcost`.
3. **Honesty**. `ToyBuiltin Nbr D r` (and `LaplaceBuiltin`, `GaussianBuiltin`, `RrBuiltin`,
   `SvtBuiltin`): the request `r` releases `f` of a draw of the Lean model with the noise
   hypotheses, labels outputs by the model's partition in the certificate's class order, and its
   declared rows pass `mechOk` for that kind with the model's parameters. Then the ODP conjunct of
   `Request.Honest` holds (`ToyBuiltin.odpCost`, …). `toy_honest`, `svt_honest`, … : for a request
   on the model's own output type, all of `Request.Honest`, given the neighbours and that
   `supEps` is the largest block (what `blocksOk` checks on every accepted step).

**What stays assumed**: the neighbour relation (`Nbr r.x₀ r.x₁`, and that the query values move
by at most `m` grid units between neighbours); that the release *is* the model's (odp's Python
samplers and mechanisms are not proved to compute these laws); the noise hypotheses of the trust
boundary `Odp/Mech/Noise.lean` for the Gaussian (`GaussNoise`) and SVT (`LapNoise` for the
threshold noise, `LapTail` for the query noise). M_toy, the grid Laplace mechanism and randomized
response take no noise hypothesis: their laws are written out.
-/
module

public import Odp.Certs.LinkCore
public import Odp.Mech.Laplace
public import Odp.Mech.SVT

@[expose] public section

set_option autoImplicit false

namespace Odp.Certs.Link

open Odp.Core Odp.Core.ExpField Odp.LedgerCore Odp.Mech

noncomputable section

variable {R X O : Type} [ExpField R]

/-! ### M_toy -/

/-- The position of an M_toy class in the certificate's class order (values, ⊥). -/
def toyIndex : ToyBlock → Nat
  | .value => 0
  | .bottom => 1

/-- **Cost link, M_toy**: an accepted `mech toy` row with parameter `ε` lists the classes
(values, ⊥) at `toyCosts (ε/D)`, and `δ = 0`. -/
theorem toy_cost_link (D : Nat) {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindToy ps gs = true) :
    (∀ b, (amt D (blockAt (toyIndex b) bs) : R) = toyCosts (amt D (blockAt 0 ps)) b) ∧
      (amt D e.delta : R) = 0 := by
  obtain ⟨hb, hd⟩ := mechOk_toy h
  refine ⟨fun b => ?_, by rw [hd]; exact amt_zero D⟩
  rw [hb]
  cases b
  · rfl
  · exact amt_zero D

/-- M_toy's guarantee (`toy_odp`) in the certificate's terms. -/
theorem toy_model_odpCost (Nbr : X → X → Prop) (D e m : Nat) (hm : 0 < m)
    (hε : (0 : R) ≤ amt D e) (n : X → Int)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
    {en : Entry} {bs : List Nat} {gs : List StepGroup}
    (h : mechOk en bs true kindToy [e] gs = true) :
    ODPcost Nbr (toyMech m (amt D e) hε n lo hi hlh)
      (fun o => amt D (blockAt (toyIndex (toyBlock o)) bs)) (amt D en.delta) := by
  have h1 := (ODP_iff_ODPcost Nbr _ toyBlock (toyCosts (amt D e)) 0).mp
    (toy_odp Nbr m hm (amt D e) hε n hn lo hi hlh)
  have hl := toy_cost_link (R := R) D h
  exact odpCost_congr h1 (fun o => (hl.1 (toyBlock o)).symm) hl.2.symm

/-- A request that is a round of **M_toy** (paper, Sec. 1; `odp.mechanisms.noise.ToyMechanism`):
it releases `f` of a draw of `toyMech m (e/D) hε n lo hi hlh` (a fair coin, then the clamped grid
Laplace release of `n x` — its law written out, `clampedLaplace` — or ⊥), labels values `0` and
⊥ `1`, and its rows pass `mech toy` with parameter `e`. Carried hypotheses: `m ≥ 1`, `e/D ≥ 0`,
`n` moves by at most `m` between neighbours; no noise hypothesis. -/
inductive ToyBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro (e m : Nat) (hm : 0 < m) (hε : (0 : R) ≤ amt D e) (n : X → Int)
      (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
      (f : Option (Window lo hi) → O)
      (hreal : Realizes r (toyMech m (amt D e) hε n lo hi hlh) f (fun o => toyIndex (toyBlock o)))
      (hrow : mechOk r.rowEntry r.blocks true kindToy [e] [] = true)

/-- **Honesty (ODP conjunct), M_toy**. -/
theorem ToyBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} (h : ToyBuiltin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨e, m, hm, hε, n, hn, lo, hi, hlh, f, hreal, hrow⟩ := h
  exact odp_of_realizes Nbr D hreal (toy_model_odpCost Nbr D e m hm hε n hn lo hi hlh hrow)

/-- **Honesty, M_toy, on its own output type**: a request whose mechanism is M_toy, labelled
(values ↦ 0, ⊥ ↦ 1), whose rows pass `mech toy` with its `ε` and whose `supEps` is the largest
block, between neighbours, is honest. -/
theorem toy_honest (Nbr : X → X → Prop) (D e m : Nat) (hm : 0 < m)
    (hε : (0 : R) ≤ amt D e) (n : X → Int)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
    (r : Request X (Option (Window lo hi)) R) (hM : r.M = toyMech m (amt D e) hε n lo hi hlh)
    (hb : ∀ o, r.block o = toyIndex (toyBlock o))
    (hrow : mechOk r.rowEntry r.blocks true kindToy [e] [] = true)
    (hsup : r.supEps = listMax r.blocks) (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  have hodp := ToyBuiltin.odpCost
    (ToyBuiltin.intro e m hm hε n hn lo hi hlh (fun o => o) (realizes_self hM hb) hrow)
  refine honest_of Nbr D r hN hodp hsup (fun o => ?_)
  have hl2 : listLen (toyBlocks (blockAt 0 [e])) = 2 := rfl
  rw [(mechOk_toy hrow).1, hl2, hb o]
  cases toyBlock o <;> decide

/-! ### The grid Laplace and Gaussian mechanisms, randomized response (one class, Lemma 3) -/

/-- A request that is a round of the **grid Laplace mechanism** (`laplaceMech`, clamped: its law
`clampedLaplace` written out, no noise hypothesis), one class for all outputs, rows passing
`mech laplace` with parameter `e`. -/
inductive LaplaceBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro (e m : Nat) (hm : 0 < m) (hε : (0 : R) ≤ amt D e) (n : X → Int)
      (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
      (f : Window lo hi → O)
      (hreal : Realizes r (laplaceMech m (amt D e) hε n lo hi hlh) f (fun _ => 0))
      (hrow : mechOk r.rowEntry r.blocks true kindLaplace [e] [] = true)

/-- **Cost link, one class** (`mech laplace`, and so `rr`, `median`: `dpBlocks`): the single
block is `ε`, `δ = 0`. -/
theorem laplace_cost_link (D : Nat) {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindLaplace ps gs = true) :
    (amt D (blockAt 0 bs) : R) = amt D (blockAt 0 ps) ∧ (amt D e.delta : R) = 0 := by
  obtain ⟨hb, hd⟩ := mechOk_laplace h
  rw [hb, hd]
  exact ⟨rfl, amt_zero D⟩

theorem LaplaceBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} (h : LaplaceBuiltin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨e, m, hm, hε, n, hn, lo, hi, hlh, f, hreal, hrow⟩ := h
  obtain ⟨hb, hd⟩ := mechOk_laplace hrow
  have hdp := laplace_dp Nbr m hm (amt D e) hε n hn lo hi hlh
  have hd' : (amt D r.delta : R) = 0 := by
    have : r.delta = 0 := hd
    rw [this]; exact amt_zero D
  have hdp' : DP Nbr (laplaceMech m (amt D e) hε n lo hi hlh) (amt D e) (amt D r.delta) := by
    rw [hd']; exact hdp
  exact odp_of_realizes Nbr D hreal (dp_model_odpCost Nbr D _ hb hdp')

/-- **Honesty, grid Laplace, on its own output type** (one class, every output labelled `0`). -/
theorem laplace_honest (Nbr : X → X → Prop) (D e m : Nat) (hm : 0 < m)
    (hε : (0 : R) ≤ amt D e) (n : X → Int)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
    (r : Request X (Window lo hi) R) (hM : r.M = laplaceMech m (amt D e) hε n lo hi hlh)
    (hb : ∀ o, r.block o = 0)
    (hrow : mechOk r.rowEntry r.blocks true kindLaplace [e] [] = true)
    (hsup : r.supEps = listMax r.blocks) (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  have hodp := LaplaceBuiltin.odpCost
    (LaplaceBuiltin.intro e m hm hε n hn lo hi hlh (fun o => o) (realizes_self hM hb) hrow)
  refine honest_of Nbr D r hN hodp hsup (fun o => ?_)
  rw [hb o, (mechOk_laplace hrow).1]
  exact Nat.zero_lt_succ _

/-- **Cost link, Gaussian**: the single block is `ε`, the round's `δ` is the row's `δ`. -/
theorem gaussian_cost_link (D : Nat) {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindGaussian ps gs = true) :
    (amt D (blockAt 0 bs) : R) = amt D (blockAt 0 ps) ∧
      (amt D e.delta : R) = amt D (blockAt 1 ps) := by
  obtain ⟨hb, hd⟩ := mechOk_gaussian h
  rw [hb, hd]
  exact ⟨rfl, rfl⟩

/-- A request that is a round of the **grid Gaussian mechanism** (`gaussianMech`, clamped), one
class, rows passing `mech gaussian` with parameters `e, d` (`δ = d/D`; the hypothesis
`GaussNoise` is CKS Thm. 7 for that `δ`, a bound odp computes in tested Python code). -/
inductive GaussianBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro (e d m : Nat) (Z : GaussNoise R m (amt D e) (amt D d)) (n : X → Int)
      (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
      (f : Window lo hi → O)
      (hreal : Realizes r (gaussianMech m (amt D e) (amt D d) Z n lo hi hlh) f (fun _ => 0))
      (hrow : mechOk r.rowEntry r.blocks true kindGaussian [e, d] [] = true)

theorem GaussianBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} (h : GaussianBuiltin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨e, d, m, Z, n, hn, lo, hi, hlh, f, hreal, hrow⟩ := h
  obtain ⟨hb, hd⟩ := mechOk_gaussian hrow
  have hdp := gaussian_dp Nbr m (amt D e) (amt D d) Z n hn lo hi hlh
  have hd' : r.delta = d := hd
  have hdp' : DP Nbr (gaussianMech m (amt D e) (amt D d) Z n lo hi hlh) (amt D e)
      (amt D r.delta) := by rw [hd']; exact hdp
  exact odp_of_realizes Nbr D hreal (dp_model_odpCost Nbr D _ hb hdp')

/-- **Honesty, grid Gaussian, on its own output type** (one class, every output labelled `0`). -/
theorem gaussian_honest (Nbr : X → X → Prop) (D e d m : Nat)
    (Z : GaussNoise R m (amt D e) (amt D d)) (n : X → Int)
    (hn : ∀ x x', Nbr x x' → n x ≤ n x' + m ∧ n x' ≤ n x + m) (lo hi : Int) (hlh : lo ≤ hi)
    (r : Request X (Window lo hi) R) (hM : r.M = gaussianMech m (amt D e) (amt D d) Z n lo hi hlh)
    (hb : ∀ o, r.block o = 0)
    (hrow : mechOk r.rowEntry r.blocks true kindGaussian [e, d] [] = true)
    (hsup : r.supEps = listMax r.blocks) (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  have hodp := GaussianBuiltin.odpCost
    (GaussianBuiltin.intro e d m Z n hn lo hi hlh (fun o => o) (realizes_self hM hb) hrow)
  refine honest_of Nbr D r hN hodp hsup (fun o => ?_)
  rw [hb o, (mechOk_gaussian hrow).1]
  exact Nat.zero_lt_succ _

/-- **Cost link, randomized response**: the single block is `ε`, `δ = 0`. -/
theorem rr_cost_link (D : Nat) {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindRr ps gs = true) :
    (amt D (blockAt 0 bs) : R) = amt D (blockAt 0 ps) ∧ (amt D e.delta : R) = 0 := by
  obtain ⟨hb, hd⟩ := mechOk_rr h
  rw [hb, hd]
  exact ⟨rfl, amt_zero D⟩

/-- A request that is a round of **randomized response** (`rrMech`) on a finite category type,
one class, rows passing `mech rr` with parameter `e`. No noise hypothesis: `rr_dp` is about the
law itself. -/
inductive RrBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro {C : Type} [Enum C] [DecidableEq C] (e : Nat) (truth : X → C) (f : C → O)
      (hreal : Realizes r (rrMech (amt D e) truth) f (fun _ => 0))
      (hrow : mechOk r.rowEntry r.blocks true kindRr [e] [] = true)

theorem RrBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat} (hD : 0 < D)
    {r : Request X O R} (h : RrBuiltin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨e, truth, f, hreal, hrow⟩ := h
  obtain ⟨hb, hd⟩ := mechOk_rr hrow
  have hdp := rr_dp Nbr (amt (R := R) D e) (amt_nonneg hD e) truth
  have hd' : (amt D r.delta : R) = 0 := by
    have : r.delta = 0 := hd
    rw [this]; exact amt_zero D
  have hdp' : DP Nbr (rrMech (amt (R := R) D e) truth) (amt D e) (amt D r.delta) := by
    rw [hd']; exact hdp
  exact odp_of_realizes Nbr D hreal (dp_model_odpCost Nbr D _ hb hdp')

/-- **Honesty, randomized response, on its own output type** (one class, every output labelled
`0`). -/
theorem rr_honest {C : Type} [Enum C] [DecidableEq C] (Nbr : X → X → Prop) (D : Nat)
    (hD : 0 < D) (e : Nat) (truth : X → C) (r : Request X C R)
    (hM : r.M = rrMech (amt D e) truth) (hb : ∀ o, r.block o = 0)
    (hrow : mechOk r.rowEntry r.blocks true kindRr [e] [] = true)
    (hsup : r.supEps = listMax r.blocks) (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  have hodp := RrBuiltin.odpCost hD
    (RrBuiltin.intro (Nbr := Nbr) e truth (fun o => o) (realizes_self hM hb) hrow)
  refine honest_of Nbr D r hN hodp hsup (fun o => ?_)
  rw [hb o, (mechOk_rr hrow).1]
  exact Nat.zero_lt_succ _

/-! ### SVT (Alg. 2, Lemma 8) -/

/-- An accepted SVT list ends at class `c`: it has `c + 1 − k` entries from class `k`. -/
theorem svtFrom_len (c e1 e2 : Nat) :
    ∀ (bs : List Nat) (k : Nat), svtFrom c e1 e2 k bs = true → listLen bs + k = c + 1
  | [], k, h => by
    have h' : decide (k = c + 1) = true := h
    have := of_decide_eq_true h'
    show 0 + k = c + 1
    omega
  | b :: bs, k, h => by
    have h' : (if decide (b * c = e1 * c + k * e2) then svtFrom c e1 e2 (k + 1) bs else false)
        = true := h
    by_cases hb : b * c = e1 * c + k * e2
    · rw [if_pos (decide_eq_true hb)] at h'
      have := svtFrom_len c e1 e2 bs (k + 1) h'
      show listLen bs + 1 + k = c + 1
      omega
    · rw [if_neg (fun h0 : decide (b * c = e1 * c + k * e2) = true => hb (of_decide_eq_true h0))]
        at h'
      cases h'

/-- `b·c = e1·c + k·e2` with `c > 0` gives `b/D = e1/D + (k/c)·(e2/D)`. -/
theorem amt_svt (D : Nat) {b c e1 e2 k : Nat} (hc : 0 < c) (h : b * c = e1 * c + k * e2) :
    (amt D b : R) = amt D e1 + natR k / natR c * amt D e2 := by
  have hR : (natR b : R) * natR c = natR e1 * natR c + natR k * natR e2 := by
    rw [← natR_mul_nat, ← natR_mul_nat, ← natR_mul_nat, ← natR_add, h]
  have hc1 := inv_natR_mul (R := R) hc
  unfold amt
  rw [Lean.Grind.Field.div_eq_mul_inv]
  generalize (natR b : R) = nb at hR ⊢
  generalize (natR c : R) = nc at hR hc1 ⊢
  generalize (natR e1 : R) = n1 at hR ⊢
  generalize (natR e2 : R) = n2 at hR ⊢
  generalize (natR k : R) = nk at hR ⊢
  generalize (natR D : R)⁻¹ = iD
  generalize nc⁻¹ = ic at hc1 ⊢
  have hb : nb = n1 + nk * n2 * ic := by
    have s1 : nb = (nb * nc) * ic := by
      have : (nb * nc) * ic = nb * (nc * ic) := by grind
      rw [this, hc1]; grind
    rw [s1, hR]
    have : (n1 * nc + nk * n2) * ic = n1 * (nc * ic) + nk * n2 * ic := by grind
    rw [this, hc1]
    grind
  rw [hb]
  grind

/-- **Cost link, SVT**: an accepted `mech svt` row with parameters `c, ε1, ε2` lists the classes
`c' = 0 … c` (number of ⊤ answers) at `svtCosts c (ε1/D) (ε2/D)`, with `c ≥ 1` and `δ = 0`. -/
theorem svt_cost_link (D : Nat) {e : Entry} {bs ps : List Nat} {gs : List StepGroup}
    (h : mechOk e bs true kindSvt ps gs = true) :
    0 < blockAt 0 ps ∧ listLen bs = blockAt 0 ps + 1 ∧
      (∀ k : Fin (blockAt 0 ps + 1), (amt D (blockAt k.val bs) : R)
        = svtCosts (blockAt 0 ps) (amt D (blockAt 1 ps)) (amt D (blockAt 2 ps)) k) ∧
      (amt D e.delta : R) = 0 := by
  obtain ⟨hc, hd, hs⟩ := mechOk_svt h
  have hlen := svtFrom_len _ _ _ bs 0 hs
  refine ⟨hc, by omega, fun k => ?_, by rw [hd]; exact amt_zero D⟩
  have hat := svtFrom_at _ _ _ bs 0 k.val hs (by have := k.isLt; omega)
  rw [Nat.zero_add] at hat
  exact amt_svt D hc hat

/-- SVT's guarantee (`svt_odp`, Lemma 8) in the certificate's terms. -/
theorem svt_model_odpCost (Nbr : X → X → Prop) (D c e1 e2 m N : Nat) (hm : 0 < m)
    (ρ : LapNoise R (amt D e1 / natR m)) (ν : LapTail R (amt D e2 / natR (2 * c * m)))
    (A : Analyst X)
    (hA : ∀ h Q, A h = some Q → ∀ x x', Nbr x x' → Q.q x ≤ Q.q x' + m ∧ Q.q x' ≤ Q.q x + m)
    {en : Entry} {bs : List Nat} {gs : List StepGroup}
    (h : mechOk en bs true kindSvt [c, e1, e2] gs = true) :
    ODPcost Nbr (svtMech ρ ν A c N) (fun a => amt D (blockAt (svtBlock c N a).val bs))
      (amt D en.delta) := by
  have hl := svt_cost_link (R := R) D h
  have h1 := (ODP_iff_ODPcost Nbr _ (svtBlock c N) (svtCosts c (amt D e1) (amt D e2)) 0).mp
    (svt_odp Nbr m c N hm hl.1 (amt D e1) (amt D e2) ρ ν A hA)
  exact odpCost_congr h1 (fun a => (hl.2.2.1 (svtBlock c N a)).symm) hl.2.2.2.symm

/-- A request that is a round of **SVT** (Alg. 2, `svtMech`, interactive analyst `A`, at most
`N` queries): it releases `f` of the answer sequence, labels an answer sequence by its class
`c' = min(#⊤, c)` (`svtBlock`), and its rows pass `mech svt` with parameters `c, e1, e2`. Carried
hypotheses: `m ≥ 1`, the threshold noise `ρ` (`LapNoise`, scale `m/ε1`), the query-noise tail `ν`
(`LapTail`, scale `2cm/ε2`), queries of sensitivity `m`. -/
inductive SvtBuiltin [Enum O] [DecidableEq O] (Nbr : X → X → Prop) (D : Nat)
    (r : Request X O R) : Prop
  | intro (c e1 e2 m N : Nat) (hm : 0 < m) (ρ : LapNoise R (amt D e1 / natR m))
      (ν : LapTail R (amt D e2 / natR (2 * c * m))) (A : Analyst X)
      (hA : ∀ h Q, A h = some Q → ∀ x x', Nbr x x' → Q.q x ≤ Q.q x' + m ∧ Q.q x' ≤ Q.q x + m)
      (f : Answers N → O)
      (hreal : Realizes r (svtMech ρ ν A c N) f (fun a => (svtBlock c N a).val))
      (hrow : mechOk r.rowEntry r.blocks true kindSvt [c, e1, e2] [] = true)

/-- **Honesty (ODP conjunct), SVT**. -/
theorem SvtBuiltin.odpCost [Enum O] [DecidableEq O] {Nbr : X → X → Prop} {D : Nat}
    {r : Request X O R} (h : SvtBuiltin Nbr D r) :
    ODPcost Nbr r.M (r.cost D) (amt D r.delta) := by
  obtain ⟨c, e1, e2, m, N, hm, ρ, ν, A, hA, f, hreal, hrow⟩ := h
  exact odp_of_realizes Nbr D hreal (svt_model_odpCost Nbr D c e1 e2 m N hm ρ ν A hA hrow)

/-- **Honesty, SVT, on its own output type** (answer sequences). -/
theorem svt_honest (Nbr : X → X → Prop) (D c e1 e2 m N : Nat) (hm : 0 < m)
    (ρ : LapNoise R (amt D e1 / natR m)) (ν : LapTail R (amt D e2 / natR (2 * c * m)))
    (A : Analyst X)
    (hA : ∀ h Q, A h = some Q → ∀ x x', Nbr x x' → Q.q x ≤ Q.q x' + m ∧ Q.q x' ≤ Q.q x + m)
    (r : Request X (Answers N) R) (hM : r.M = svtMech ρ ν A c N)
    (hb : ∀ a, r.block a = (svtBlock c N a).val)
    (hrow : mechOk r.rowEntry r.blocks true kindSvt [c, e1, e2] [] = true)
    (hsup : r.supEps = listMax r.blocks) (hN : Nbr r.x₀ r.x₁) : r.Honest Nbr D := by
  have hodp := SvtBuiltin.odpCost
    (SvtBuiltin.intro c e1 e2 m N hm ρ ν A hA (fun a => a) (realizes_self hM hb) hrow)
  refine honest_of Nbr D r hN hodp hsup (fun a => ?_)
  have hl := (svt_cost_link (R := R) D hrow).2.1
  rw [hb a, hl]
  exact (svtBlock c N a).isLt

end

end Odp.Certs.Link
