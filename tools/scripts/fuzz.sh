#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang, ASan and UBSan, and
# runs each one for a while, starting from its checked-in seed corpus.
#
#   tools/scripts/fuzz.sh [seconds-per-target]     (default 30)
#
# Prints executions and coverage (libFuzzer's cov: edges and ft: features) per
# target and exits non-zero if any target crashed, leaked, tripped a sanitizer
# or violated one of its properties; the crashing input is then left in
# $build/fuzz-artifacts/<target>/ (replay it: $build/tests/fuzz/fuzz_<target> FILE).
# New inputs go to $build/fuzz-corpus/<target>/, never into the checked-in seeds:
# copy an interesting one (a minimised crash, above all) to tests/fuzz/corpus/<target>/
# by hand so the regression test replays it from then on.
# Environment: BRAID_FUZZ_BUILD_DIR (default build-fuzz; reused as it is when
# already configured with BRAID_FUZZ=ON), BRAID_FUZZ_CXXFLAGS (extra compiler
# flags for a build this script configures), BRAID_FUZZ_ONLY (space-separated
# target names: fuzz only these).
set -euo pipefail
seconds="${1:-30}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BRAID_FUZZ_BUILD_DIR:-$root/build-fuzz}"

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ is needed for libFuzzer (apt-get install clang)" >&2
  exit 2
fi
# A build folder already configured for fuzzing (e.g. CI's build-asan, made by
# BRAID_SAN_FUZZ=1 tools/scripts/sanitize.sh) is reused as it is.
if ! grep -qs '^BRAID_FUZZ:BOOL=ON$' "$build/CMakeCache.txt"; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBRAID_SANITIZE=address,undefined -DBRAID_FUZZ=ON \
    -DBRAID_BUILD_TOOLS=OFF "-DCMAKE_CXX_FLAGS=${BRAID_FUZZ_CXXFLAGS:-}" >/dev/null
fi
ninja -C "$build" braid_fuzzers >/dev/null

# Every report is fatal; leaks count as crashes (libFuzzer checks per input).
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export BRAID_DEBUG=NONE  # dropped strangers are expected here; do not log each one

failed=0
printf '%-20s %12s %10s %8s %8s %8s  %s\n' target executions exec/s cov ft corpus result
for exe in "$build"/tests/fuzz/fuzz_*; do
  [[ -x "$exe" && -f "$exe" ]] || continue
  target="${exe##*/fuzz_}"
  [[ -d "$root/tests/fuzz/corpus/$target" ]] || continue  # fuzz_corpus_test, the replay test, is no target
  if [[ -n "${BRAID_FUZZ_ONLY:-}" && " $BRAID_FUZZ_ONLY " != *" $target "* ]]; then continue; fi
  work="$build/fuzz-corpus/$target" artifacts="$build/fuzz-artifacts/$target" log="$build/fuzz-$target.log"
  mkdir -p "$work" "$artifacts"
  rc=0
  "$exe" -max_total_time="$seconds" -timeout=25 -print_final_stats=1 -artifact_prefix="$artifacts/" \
    "$work" "$root/tests/fuzz/corpus/$target" >"$log" 2>&1 || rc=$?
  # The last status line: "#123456 ... cov: 812 ft: 2301 corp: 97/3214b ... exec/s: 9120 ...".
  status="$(grep -E '^#[0-9]+' "$log" | tail -1 || true)"
  field() { sed -nE "s/.* $1: ?([0-9]+).*/\\1/p" <<<"$status"; }
  execs="$(sed -nE 's/^stat::number_of_executed_units: *([0-9]+)/\1/p' "$log")"
  speed="$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+)/\1/p' "$log")"
  corpus="$(sed -nE 's/.* corp: ([0-9]+)\/.*/\1/p' <<<"$status")"
  result=ok
  if [[ $rc -ne 0 ]]; then
    result="FAILED (rc $rc, log $log)"
    failed=1
  fi
  printf '%-20s %12s %10s %8s %8s %8s  %s\n' "$target" "${execs:-?}" "${speed:-?}" "$(field cov)" "$(field ft)" \
    "${corpus:-?}" "$result"
  if [[ $rc -ne 0 ]]; then
    grep -E 'ERROR|SUMMARY|fuzz property|Test unit written|runtime error' "$log" | head -8 | sed 's/^/    /'
  fi
done
exit $failed
