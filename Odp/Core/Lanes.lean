/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# A laned session is (ε_t, δ_t)-DP: the lanes' guarantees, composed concurrently

A laned ledger (`odp.ledger.lanes`) divides its budget `(ε_t, δ_t)` into lanes, each a privacy
filter with a share `(ε_j, δ_j)` fixed before the session: the ODP lane (Alg. 1), zCDP, Rényi and
advanced-composition lanes. The analyst interleaves rounds of all lanes adaptively, so the session
is the *concurrent* composition of the lanes, each an interactive mechanism.

`session_dp` states the session's guarantee from the lanes' guarantees. What it proves is the
ledger arithmetic that joins them: a certificate the kernel accepted (`lanesOk` — the shares add up
to the budget exactly, the ODP lane comes first, every lane holds its charges — and `checkCert` of
the ODP lane's steps from its share) gives every lane its hypothesis, and the shares' sum is the
budget. What it takes as **named hypotheses** (structures passed as arguments, never axioms) are
the cited theorems, in this one file:

* `SessionTheorems.concurrent_basic` — Haney, Shoemate, Tian, Vadhan, Vyrros, Xu, Zhang 2023,
  **Thm. 1.8** (Lyu 2022; Vadhan & Zhang 2023): every composition theorem for non-interactive
  (ε, δ)-DP mechanisms holds for the concurrent composition of interactive ones with finite
  communication; with basic composition, the concurrent composition of (ε_j, δ_j)-DP interactive
  mechanisms is (Σε_j, Σδ_j)-DP. (odp's lanes communicate finitely: every release is clamped to a
  finite window, every round is one of finitely many.)
* `LaneTheorems.odp` — the ODP lane is Alg. 1 run from its share: (ε_0, δ_0)-DP by Hartmann et
  al. 2022, **Theorem 7** — proved in this project for the accountant's experiment
  (`Odp.Core.checkCert_certificate_sound`, for honest requests); here it is the claim that the
  lane, as one interactive mechanism of the session, has that guarantee.
* `LaneTheorems.zcdp` — Haney et al. 2023, **Thm. 4.10**: `Σρ_i ≤ ρ` is a valid zCDP filter for
  concurrently composed interactive mechanisms, so the lane is ρ-zCDP; its ρ converts to at most
  `(ε_j, δ_j)` (Canonne–Kamath–Steinke 2020, Prop. 12, or Bun–Steinke 2016, Prop. 1.3 — a
  numerical fact about irrational numbers that `odp verify` checks with rigorous rational
  brackets, not Lean).
* `LaneTheorems.renyi` — Haney et al. 2023, **Thm. 4.6 (= 1.22)** at each order of the lane, and
  a union bound over its `m` orders (the lane continues while *some* order fits; each order's
  budget converts at `δ_j/m`, Canonne, Kamath, Steinke 2020, Prop. 12): docs/filters.md writes the argument out.
* `LaneTheorems.advanced` — Haney et al. 2023, **Thm. 3.7 / Cor. 3.5** (the Whitehouse, Ramdas,
  Rogers, Wu 2023 filter is a valid (ε, δ)-DP filter for interactive mechanisms).

`IM` (interactive mechanisms), `IsDP` (Haney et al. 2023, Def. 1.7) and `concurrent` (their
Def. 2.4) are abstract: nothing here models an interaction; the statement is exactly "these lane
guarantees and Thm. 1.8 give the session's guarantee, and the certificate's arithmetic is what
connects them".
-/
module

public import Odp.Core.Ledger

@[expose] public section

set_option autoImplicit false

namespace Odp.Core.Lanes

noncomputable section

open Odp.Core Odp.Core.ExpField Odp.LedgerCore

/-- The share at position `j` of a lane list. -/
def shareAt : Nat → List Share → Option Share
  | _, [] => none
  | 0, h :: _ => some h
  | j + 1, _ :: hs => shareAt j hs

/-- The session's lanes as (mechanism, share) pairs, numbered from `j`. -/
def lanePairs {IM : Type} (lane : Nat → IM) : Nat → List Share → List (IM × Share)
  | _, [] => []
  | j, h :: hs => (lane j, h) :: lanePairs lane (j + 1) hs

/-- The cited composition theorem and the objects it speaks of: interactive mechanisms `IM`,
"`M` is an (ε, δ)-DP interactive mechanism" (`IsDP`, Haney et al. 2023, Def. 1.7) and their
concurrent composition (`concurrent`, Def. 2.4). Amounts are in units of `1/D`. -/
structure SessionTheorems (R : Type) [ExpField R] (IM : Type) (D : Nat) where
  IsDP : IM → R → R → Prop
  concurrent : List IM → IM
  /-- **Haney et al. 2023, Thm. 1.8** (Lyu 2022; Vadhan–Zhang 2023) with basic composition:
  interactive mechanisms (finite communication), each `(ε_j, δ_j)`-DP, composed concurrently
  are `(Σε_j, Σδ_j)`-DP. -/
  concurrent_basic : ∀ ls : List (IM × Share),
    (∀ p ∈ ls, IsDP p.1 (amt D p.2.eps) (amt D p.2.delta)) →
      IsDP (concurrent (ls.map Prod.fst)) (amt D (sharesEps (ls.map Prod.snd)))
        (amt D (sharesDelta (ls.map Prod.snd)))

/-- The lanes' guarantees in one session: lane `j` is the interactive mechanism `lane j`, with
the share `shareAt j hs`; the session's certificate has the ODP lane's `steps`, the notion
lanes' budget coordinates `ss` and their charges `cs`. Each field is a cited filter theorem (with,
for a notion lane, the conversion of its budget to its share, checked numerically by `odp
verify`), applied to a lane whose certificate rows fit. -/
structure LaneTheorems {R : Type} [ExpField R] {IM : Type} {D : Nat}
    (T : SessionTheorems R IM D) (lane : Nat → IM) (hs : List Share) (steps : List CertStep)
    (ss : List Slot) (cs : List Cost) : Prop where
  /-- **Hartmann et al. 2022, Theorem 7** (`Odp.Core.checkCert_certificate_sound` for the
  accountant): the ODP lane, lane 0, whose steps replay from its share, is (ε_0, δ_0)-DP. -/
  odp : ∀ (h : Share) (t : State), shareAt 0 hs = some h → h.kind = laneOdp →
    checkCert ⟨h.eps, h.delta⟩ steps = some t → T.IsDP (lane 0) (amt D h.eps) (amt D h.delta)
  /-- **Haney et al. 2023, Thm. 4.10** and the conversion of the lane's ρ: a zCDP lane whose
  charges fit its ρ is (ε_j, δ_j)-DP. -/
  zcdp : ∀ (j : Nat) (h : Share), shareAt j hs = some h → h.kind = laneZcdp →
    allFit j cs ss = true → T.IsDP (lane j) (amt D h.eps) (amt D h.delta)
  /-- **Haney et al. 2023, Thm. 4.6 (1.22)** at each order, a union bound over the orders, and
  each order's conversion at `δ_j/m`: a Rényi lane some order of which holds its charges (or that
  was never charged) is (ε_j, δ_j)-DP. -/
  renyi : ∀ (j : Nat) (h : Share), shareAt j hs = some h → h.kind = laneRenyi →
    (laneCharged j cs = false ∨ someFit j cs ss = true) →
      T.IsDP (lane j) (amt D h.eps) (amt D h.delta)
  /-- **Haney et al. 2023, Thm. 3.7 / Cor. 3.5** (the Whitehouse et al. filter): an
  advanced-composition lane whose `Σε_i²` and `Σδ_i` fit its budget is (ε_j, δ_j)-DP. -/
  advanced : ∀ (j : Nat) (h : Share), shareAt j hs = some h → h.kind = laneAdvanced →
    allFit j cs ss = true → T.IsDP (lane j) (amt D h.eps) (amt D h.delta)

/-! ### The arithmetic that joins them -/

theorem lanePairs_snd {IM : Type} (lane : Nat → IM) :
    ∀ (j : Nat) (hs : List Share), (lanePairs lane j hs).map Prod.snd = hs
  | _, [] => rfl
  | j, h :: hs => by
    show h :: (lanePairs lane (j + 1) hs).map Prod.snd = h :: hs
    rw [lanePairs_snd lane (j + 1) hs]

theorem shareAt_cons_succ (h : Share) (hs : List Share) (k : Nat) :
    shareAt (k + 1) (h :: hs) = shareAt k hs := rfl

/-- What `laneFits` accepts, kind by kind. -/
theorem laneFits_cases {l k : Nat} {cs : List Cost} {ss : List Slot}
    (h : laneFits l k cs ss = true) :
    (k = laneOdp ∧ l = 0) ∨ (k = laneZcdp ∧ allFit l cs ss = true) ∨
      (k = laneRenyi ∧ (laneCharged l cs = false ∨ someFit l cs ss = true)) ∨
        (k = laneAdvanced ∧ allFit l cs ss = true) := by
  unfold laneFits at h
  by_cases h0 : k = laneOdp
  · rw [if_pos (decide_eq_true h0)] at h
    exact Or.inl ⟨h0, of_decide_eq_true (band_left h)⟩
  · rw [if_neg (fun e : decide (k = laneOdp) = true => h0 (of_decide_eq_true e))] at h
    by_cases h1 : k = laneZcdp
    · rw [if_pos (decide_eq_true h1)] at h
      exact Or.inr (Or.inl ⟨h1, h⟩)
    · rw [if_neg (fun e : decide (k = laneZcdp) = true => h1 (of_decide_eq_true e))] at h
      by_cases h2 : k = laneRenyi
      · rw [if_pos (decide_eq_true h2)] at h
        refine Or.inr (Or.inr (Or.inl ⟨h2, ?_⟩))
        cases hc : laneCharged l cs
        · exact Or.inl rfl
        · rw [hc] at h
          exact Or.inr h
      · rw [if_neg (fun e : decide (k = laneRenyi) = true => h2 (of_decide_eq_true e))] at h
        by_cases h3 : k = laneAdvanced
        · rw [if_pos (decide_eq_true h3)] at h
          exact Or.inr (Or.inr (Or.inr ⟨h3, h⟩))
        · rw [if_neg (fun e : decide (k = laneAdvanced) = true => h3 (of_decide_eq_true e))] at h
          cases h

/-- The ODP lane's share, when it is the first lane. -/
theorem odpShare_first (h : Share) (hs : List Share) (hk : h.kind = laneOdp) :
    odpShare (h :: hs) = ⟨h.eps, h.delta⟩ := by
  show (if decide (h.kind = laneOdp) then (⟨h.eps, h.delta⟩ : State) else odpShare hs) = _
  rw [if_pos (decide_eq_true hk)]

/-- Every lane of an accepted certificate gets its guarantee from its hypothesis. -/
theorem lanes_dp {R : Type} [ExpField R] {IM : Type} {D : Nat} (T : SessionTheorems R IM D)
    (lane : Nat → IM) (hs : List Share) (steps : List CertStep) (ss : List Slot)
    (cs : List Cost) (t : State) (H : LaneTheorems T lane hs steps ss cs)
    (hc : checkCert (odpShare hs) steps = some t) :
    ∀ (rest : List Share) (j : Nat), (∀ k, shareAt (j + k) hs = shareAt k rest) →
      lanesFit j cs ss rest = true →
        ∀ p ∈ lanePairs lane j rest, T.IsDP p.1 (amt D p.2.eps) (amt D p.2.delta) := by
  intro rest
  induction rest with
  | nil =>
    intro j _ _ p hp
    cases hp
  | cons h rest ih =>
    intro j hat hfit p hp
    have hfit' : (if laneFits j h.kind cs ss then lanesFit (j + 1) cs ss rest else false)
        = true := hfit
    have hf : laneFits j h.kind cs ss = true := by
      cases e : laneFits j h.kind cs ss
      · rw [e] at hfit'
        cases hfit'
      · rfl
    rw [if_pos hf] at hfit'
    have hj : shareAt j hs = some h := by
      have := hat 0
      rw [Nat.add_zero] at this
      exact this
    cases hp with
    | head =>
      show T.IsDP (lane j) (amt D h.eps) (amt D h.delta)
      rcases laneFits_cases hf with ⟨hk, h0⟩ | ⟨hk, ha⟩ | ⟨hk, hr⟩ | ⟨hk, ha⟩
      · subst h0
        cases hs with
        | nil => cases hj
        | cons h' hs' =>
          have e : h' = h := Option.some.inj hj
          subst e
          rw [odpShare_first h' hs' hk] at hc
          exact H.odp h' t hj hk hc
      · exact H.zcdp j h hj hk ha
      · exact H.renyi j h hj hk hr
      · exact H.advanced j h hj hk ha
    | tail _ hmem =>
      refine ih (j + 1) (fun k => ?_) hfit' p hmem
      have := hat (k + 1)
      rw [shareAt_cons_succ] at this
      rw [show j + 1 + k = j + (k + 1) by omega]
      exact this

/-- **The session guarantee.** A laned certificate that the kernel accepted — `lanesOk` (the
shares add up to the budget `total`, the ODP lane comes first, every notion lane holds its
charges) and `checkCert` of the ODP lane's steps from its share — together with the lanes'
filter theorems (`LaneTheorems`) and the concurrent composition theorem
(`SessionTheorems.concurrent_basic`, Haney et al. 2023, Thm. 1.8), gives: the concurrent
composition of the session's lanes is `(total.eps / D, total.delta / D)`-DP. -/
theorem session_dp {R : Type} [ExpField R] {IM : Type} {D : Nat} (T : SessionTheorems R IM D)
    (lane : Nat → IM) (total : State) (hs : List Share) (ss : List Slot) (cs : List Cost)
    (steps : List CertStep) (t : State) (H : LaneTheorems T lane hs steps ss cs)
    (hl : lanesOk total hs ss cs = true) (hc : checkCert (odpShare hs) steps = some t) :
    T.IsDP (T.concurrent ((lanePairs lane 0 hs).map Prod.fst)) (amt D total.eps)
      (amt D total.delta) := by
  have hl' : (decide (sharesEps hs = total.eps) && decide (sharesDelta hs = total.delta) &&
      costsKnown ss cs && lanesFit 0 cs ss hs) = true := hl
  have heps : sharesEps hs = total.eps := of_decide_eq_true (band_left (band_left (band_left hl')))
  have hdel : sharesDelta hs = total.delta :=
    of_decide_eq_true (band_right (band_left (band_left hl')))
  have hfit : lanesFit 0 cs ss hs = true := band_right hl'
  have each := lanes_dp T lane hs steps ss cs t H hc hs 0 (fun k => by rw [Nat.zero_add])
    hfit
  have := T.concurrent_basic (lanePairs lane 0 hs) each
  rw [lanePairs_snd, heps, hdel] at this
  exact this

end

end Odp.Core.Lanes
