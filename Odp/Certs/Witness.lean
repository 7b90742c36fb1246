/-
Copyright (c) 2026 The odp authors. Released under Apache 2.0.

# The capstone is not vacuous, and what it does not read

`Odp.Certs.certificate_sound_builtin` (`Odp/Certs/Link.lean`) has many hypotheses; this file shows
they hold together for a real, closed run, with no noise hypothesis left open: two rounds of
randomized response on `Bool` at `ε = 1/10` (units `D = 10`), the second asked whatever the first
released. Randomized response's law is written out (`rrMech`), so nothing from the trust boundary
is needed: `strat_allBuiltin` proves `Strategy.AllBuiltin`, the kernel accepts the two-step
certificate (`cert_ok`, by `decide`), and `capstone_nonvacuous` is the capstone's DP conclusion
for that run, over any `ExpField`.

**A limitation, pinned here so it is not forgotten.** The capstone ties the certificate's `step`
entries to the requests (`cs.map CertStep.entry = A.rowsAlong os`) but does not read the
certificate's `mech` or `blocks` rows: that each request's declared rows pass `mechOk` for its
kind is part of `Strategy.AllBuiltin` (a hypothesis about the requests, i.e. about the code that
made them), not something taken from the certificate. `certDeclared_ok` and the last example show
the same run's certificate with every round recorded as `declared` is accepted, and the capstone
applies to it unchanged. The `mech` rows are checked (by `mechOk`, in the generated checker and by
the kernel) so that a certificate cannot relabel a recorded round; the capstone's guarantee rests
on the requests being built-in.

`laplace_capstone_nonvacuous` and `toy_capstone_nonvacuous` do the same for one round of the
grid Laplace mechanism and of M_toy: their laws are written out (`clampedLaplace`), so no noise
hypothesis is left open either.

(Written by an adversarial review of the capstone, kept as a regression example.)
-/
module

public import Odp.Certs.Link

@[expose] public section

set_option autoImplicit false

namespace Odp.Certs.Witness

open Odp.Core Odp.Core.ExpField Odp.LedgerCore Odp.Mech Odp.Certs Odp.Certs.Link

noncomputable section

variable {R : Type} [ExpField R]

/-- Randomized response on `Bool` at `ε = 1/10` (`D = 10`, `e = 1`), one class. -/
def rrReq : Request Bool Bool R :=
  { x₀ := false, x₁ := true, M := rrMech (amt 10 1) (fun x => x), supEps := 1, blocks := [1],
    block := fun _ => 0, delta := 0 }

theorem rrReq_builtinOk : BuiltinOk (fun _ _ => True) 10 (rrReq (R := R)) := by
  refine And.intro trivial (And.intro (Or.inr (Or.inr (Or.inr (Or.inr (Or.inl ?_)))))
    (And.intro rfl (fun _ => Nat.zero_lt_one)))
  exact RrBuiltin.intro 1 (fun x => x) (fun o => o) (realizes_self rfl (fun _ => rfl)) rfl

/-- Two rounds of randomized response, the second asked whatever the first released. -/
def strat : Strategy Bool Bool R := .ask rrReq (fun _ => .ask rrReq (fun _ => .stop))

theorem strat_allBuiltin : (strat (R := R)).AllBuiltin (fun _ _ => True) 10 :=
  And.intro rrReq_builtinOk (fun _ => And.intro rrReq_builtinOk (fun _ => trivial))

def certSteps : List CertStep :=
  [⟨⟨1, 1, 0⟩, some ([1], 0), none, ⟨kindRr, [1], []⟩⟩,
   ⟨⟨1, 1, 0⟩, some ([1], 0), none, ⟨kindRr, [1], []⟩⟩]

theorem cert_ok : checkCert ⟨10, 0⟩ certSteps = some ⟨8, 0⟩ := by decide

/-- The capstone's hypotheses hold together for a non-empty run (over any `ExpField`). -/
theorem capstone_nonvacuous :
    ∀ V : List Bool → Bool,
      (enforce 10 ⟨10, 0⟩ (strat (R := R))).prob false V
        ≤ exp (amt 10 10) * (enforce 10 ⟨10, 0⟩ (strat (R := R))).prob true V + amt 10 0 :=
  (certificate_sound_builtin (fun _ _ => True) 10 (by decide) strat ⟨10, 0⟩ ⟨8, 0⟩ [true, false]
    certSteps strat_allBuiltin cert_ok rfl).2.2.2.2

/-- The certificate's `mech` rows are not tied to the requests: the same run with every round
recorded as `declared` is accepted, and the capstone applies unchanged. -/
def certDeclared : List CertStep :=
  [⟨⟨1, 1, 0⟩, some ([1], 0), none, MechRow.declared⟩,
   ⟨⟨1, 1, 0⟩, some ([1], 0), none, MechRow.declared⟩]

theorem certDeclared_ok : checkCert ⟨10, 0⟩ certDeclared = some ⟨8, 0⟩ := by decide

example : ∀ V : List Bool → Bool,
      (enforce 10 ⟨10, 0⟩ (strat (R := R))).prob false V
        ≤ exp (amt 10 10) * (enforce 10 ⟨10, 0⟩ (strat (R := R))).prob true V + amt 10 0 :=
  (certificate_sound_builtin (fun _ _ => True) 10 (by decide) strat ⟨10, 0⟩ ⟨8, 0⟩ [true, false]
    certDeclared strat_allBuiltin certDeclared_ok rfl).2.2.2.2

/-! ### M_toy and the grid Laplace mechanism: no noise hypothesis either

Their laws are written out (`clampedLaplace`), so a run of them is a closed witness too: one round
of the grid Laplace mechanism (and one of M_toy) on the window `[0, 3]`, databases `x ∈ ℤ` with
neighbours at distance at most 1, the query `n(x) = x` (`m = 1`), `ε = 1/10`. -/

/-- The grid Laplace mechanism at `ε = 1/10` on the window `[0, 3]`, one class. -/
def lapReq : Request Int (Window 0 3) R :=
  { x₀ := 0, x₁ := 1, M := laplaceMech 1 (amt 10 1) (amt_nonneg (by decide) 1) (fun x => x) 0 3
      (by decide),
    supEps := 1, blocks := [1], block := fun _ => 0, delta := 0 }

theorem lapReq_builtinOk :
    BuiltinOk (fun x x' : Int => (x - x').natAbs ≤ 1) 10 (lapReq (R := R)) := by
  refine And.intro (show ((0 : Int) - 1).natAbs ≤ 1 by decide)
    (And.intro (Or.inr (Or.inr (Or.inl ?_))) (And.intro rfl (fun _ => Nat.zero_lt_one)))
  exact LaplaceBuiltin.intro 1 1 (by decide) (amt_nonneg (by decide) 1) (fun x => x)
    (fun x x' h => ⟨show x ≤ x' + ((1 : Nat) : Int) by omega,
      show x' ≤ x + ((1 : Nat) : Int) by omega⟩)
    0 3 (by decide) (fun o => o) (realizes_self rfl (fun _ => rfl)) rfl

/-- M_toy at `ε = 1/10` on the window `[0, 3]`, classes (values, ⊥). -/
def toyReq : Request Int (Option (Window 0 3)) R :=
  { x₀ := 0, x₁ := 1, M := toyMech 1 (amt 10 1) (amt_nonneg (by decide) 1) (fun x => x) 0 3
      (by decide),
    supEps := 1, blocks := [1, 0], block := fun o => toyIndex (toyBlock o), delta := 0 }

theorem toyReq_builtinOk :
    BuiltinOk (fun x x' : Int => (x - x').natAbs ≤ 1) 10 (toyReq (R := R)) := by
  refine And.intro (show ((0 : Int) - 1).natAbs ≤ 1 by decide)
    (And.intro (Or.inr (Or.inl ?_)) (And.intro rfl (fun o => ?_)))
  · exact ToyBuiltin.intro 1 1 (by decide) (amt_nonneg (by decide) 1) (fun x => x)
      (fun x x' h => ⟨show x ≤ x' + ((1 : Nat) : Int) by omega,
        show x' ≤ x + ((1 : Nat) : Int) by omega⟩)
      0 3 (by decide) (fun o => o) (realizes_self rfl (fun _ => rfl)) rfl
  · cases o with
    | none => show 1 < 2; decide
    | some _ => show 0 < 2; decide

/-- The capstone for one round of the grid Laplace mechanism (certificate: `mech laplace 1`),
over any `ExpField`: no hypothesis left open. -/
theorem laplace_capstone_nonvacuous :
    ∀ V : List (Window 0 3) → Bool,
      (enforce 10 ⟨10, 0⟩ (.ask (lapReq (R := R)) (fun _ => .stop))).prob false V
        ≤ exp (amt 10 10) * (enforce 10 ⟨10, 0⟩ (.ask (lapReq (R := R)) (fun _ => .stop))).prob
            true V + amt 10 0 :=
  (certificate_sound_builtin (fun x x' : Int => (x - x').natAbs ≤ 1) 10 (by decide)
    (.ask lapReq (fun _ => .stop)) ⟨10, 0⟩ ⟨9, 0⟩ [⟨2, by decide⟩]
    [⟨⟨1, 1, 0⟩, some ([1], 0), none, ⟨kindLaplace, [1], []⟩⟩]
    (And.intro lapReq_builtinOk (fun _ => trivial)) (by decide) rfl).2.2.2.2

/-- The capstone for one round of M_toy that released a value (certificate: `mech toy 1`), over
any `ExpField`: no hypothesis left open. -/
theorem toy_capstone_nonvacuous :
    ∀ V : List (Option (Window 0 3)) → Bool,
      (enforce 10 ⟨10, 0⟩ (.ask (toyReq (R := R)) (fun _ => .stop))).prob false V
        ≤ exp (amt 10 10) * (enforce 10 ⟨10, 0⟩ (.ask (toyReq (R := R)) (fun _ => .stop))).prob
            true V + amt 10 0 :=
  (certificate_sound_builtin (fun x x' : Int => (x - x').natAbs ≤ 1) 10 (by decide)
    (.ask toyReq (fun _ => .stop)) ⟨10, 0⟩ ⟨9, 0⟩ [some ⟨2, by decide⟩]
    [⟨⟨1, 1, 0⟩, some ([1, 0], 0), none, ⟨kindToy, [1], []⟩⟩]
    (And.intro toyReq_builtinOk (fun _ => trivial)) (by decide) rfl).2.2.2.2

end

end Odp.Certs.Witness
