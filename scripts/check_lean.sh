#!/usr/bin/env bash
# Build and check the Lean core (Odp/, OdpCheck.lean) where a Lean toolchain is available.
#
#   scripts/check_lean.sh            all stages: build, examples, axioms
#   scripts/check_lean.sh build      lake exe cache get; lake build; fail on unfinished proofs
#   scripts/check_lean.sh examples   lake build odpcheck; run it on examples/*.ledger
#   scripts/check_lean.sh axioms     print the axioms of the main theorems; fail on sorryAx
#
# Without `lake` on PATH it prints "skipped: no Lean toolchain" and exits 0, so that the Python
# CI (.ci/run) can call it unconditionally. The GitHub workflow .github/workflows/lean.yml
# installs elan and calls the stages one by one.
set -euo pipefail

cd "$(dirname "$0")/.."

if ! command -v lake >/dev/null 2>&1; then
  echo "skipped: no Lean toolchain"
  exit 0
fi

stage="${1:-all}"
logdir=".lake/odp-logs"
mkdir -p "$logdir"

# Lean's warning for a declaration with an unfinished proof.
unfinished="declaration uses 'sorry'"

build() {
  lake exe cache get
  lake build 2>&1 | tee "$logdir/build.log"
  if grep -n "$unfinished" "$logdir/build.log"; then
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
  lake env lean Odp/Axioms.lean 2>&1 | tee "$logdir/axioms.log"
  if grep -nE "sorryAx|ofReduceBool" "$logdir/axioms.log"; then
    echo "error: a main theorem depends on sorryAx or Lean.ofReduceBool" >&2
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
