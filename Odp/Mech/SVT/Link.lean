/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# Linking certificates to the proofs: the Sparse Vector Technique (Alg. 2, Lemma 8)

For this kind of `mech` row (`Odp.LedgerCore.mechOk`), as for every linked kind (the shared
part is `Odp/Certs/LinkCore.lean`, the capstone `Odp/Certs/Link.lean`):

1. **Cost link**: if `mechOk` accepts the round's rows with the row's parameters `ps` (natural
   numbers in units of `1/D`), then the round's blocks, read in `R` with `amt D`, are the cost
   function that the mechanism's theorem is proved for, evaluated at the parameters read with
   `amt D`, in the certificate's class order, and the round's `δ` is the mechanism's.
2. **Honesty**: a request that releases `f` of a draw of the Lean model (with its hypotheses),
   labels outputs by the model's partition in the certificate's class order, and whose declared
   rows pass `mechOk` for this kind with the model's parameters satisfies the ODP conjunct of
   `Request.Honest`; on the model's own output type, all of `Request.Honest`, given the
   neighbours and that `supEps` is the largest block (what `blocksOk` checks on every accepted
   step).

Here: `svtFrom_len`, `amt_svt`, `svt_cost_link` (`c' = 0 … c` ⊤ answers:
`amt D (blockAt c' bs) = svtCosts c (amt D e1) (amt D e2) c'`, `δ = 0`; the row over `Nat` is
`Odp.LedgerCore.mechOk_svt`), `svt_model_odpCost` (`svt_odp` in the certificate's terms),
`SvtBuiltin`, `SvtBuiltin.odpCost`, `svt_honest`.

**What stays assumed**: the neighbour relation and that every query the analyst may choose
moves by at most `m` grid units between neighbours; that the release is the model's; the noise
hypotheses of the trust boundary `Odp/Mech/Common/Noise.lean` (`LapNoise` for the threshold
noise, `LapTail` for the query noise).
-/
module

public import Odp.Certs.LinkCore
public import Odp.Mech.SVT.Privacy

@[expose] public section

set_option autoImplicit false

namespace Odp.Certs.Link

open Odp.Core Odp.Core.ExpField Odp.LedgerCore Odp.Mech

noncomputable section

variable {R X O : Type} [ExpField R]

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
