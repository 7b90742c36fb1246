import Lake
open Lake DSL

package «odp» where
  -- Applied to every module of this package (builds and editor); each file also sets it.
  leanOptions := #[⟨`autoImplicit, false⟩, ⟨`relaxedAutoImplicit, false⟩]

require mathlib from git
  "https://github.com/leanprover-community/mathlib4.git" @ "v4.29.0"

@[default_target]
lean_lib «Odp»

/-- The Mathlib layer (stated only on our machines; this workflow builds it). -/
@[default_target]
lean_lib «OdpMathlib»

/-- `lake exe odpcheck LEDGER`: replays an exported ledger with the rules of `Odp.LedgerCore`.
It imports no Mathlib, so it compiles in seconds. -/
lean_exe odpcheck where
  root := `OdpCheck
