/-
Copyright (c) 2025 The odp authors. Released under Apache 2.0.

# Axioms used by the main theorems

Each line prints the axioms a theorem depends on. The expected answer is a subset of
`[propext, Classical.choice, Quot.sound]` (the ledger lemmas use none or `propext` only).
CI runs `lake env lean Odp/Axioms.lean` and fails if `sorryAx` or `Lean.ofReduceBool` appears.
-/
import OdpMathlib.Prob
import OdpMathlib.Defs
import OdpMathlib.Lemmas
import OdpMathlib.Lemma20
import OdpMathlib.Composition
import Odp.LedgerCore
import OdpMathlib.Rules
import Odp.Certs.Example

set_option autoImplicit false

-- Definitions 1, 2, 5 and the equivalence of the two forms of Definition 2
#print axioms Odp.ODP_iff_ODPcost
-- Lemmas 3, 4, 6
#print axioms Odp.odp_of_dp
#print axioms Odp.dp_of_odp
#print axioms Odp.dp_of_odp_sup
#print axioms Odp.odp_of_subsetDP
#print axioms Odp.odpCost_of_dp
#print axioms Odp.dp_of_odpCost
-- Lemma 20
#print axioms Odp.tsum_tsub_le
#print axioms Odp.lemma20
#print axioms Odp.lemma20_pair
#print axioms Odp.lemma20_odp
-- Theorem 7
#print axioms Odp.odp_composition
#print axioms Odp.odp_composition_randomized
#print axioms Odp.odp_composition_partition
#print axioms Odp.odp_composition_partition_randomized
-- Ledger rules
#print axioms Odp.LedgerCore.admits_iff
#print axioms Odp.LedgerCore.replay_sound
#print axioms Odp.LedgerCore.blocksOk_bound
#print axioms Odp.LedgerCore.deltasOk_sound
#print axioms Odp.admits_spec
#print axioms Odp.replay_spec
#print axioms Odp.blocks_spec
#print axioms Odp.deltas_spec
#print axioms Odp.valid_of_ledgerValid
#print axioms Odp.odp_composition_ledger
-- Sample certificate
#print axioms Odp.Certs.Example.run_ok
#print axioms Odp.Certs.Example.run_rejected
