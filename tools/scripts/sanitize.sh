#!/usr/bin/env bash
# Builds the whole tree with a sanitizer and runs the test suite under it,
# failing on the first report.
#
#   tools/scripts/sanitize.sh [address|thread] [all|build|test]   (default: address all)
#
#   address: ASan + UBSan, -fno-sanitize-recover=all, into build-asan
#   thread:  TSan, into build-tsan
#   build / test: only configure + build, or only run the tests of a build made before.
# Environment: BRAID_SAN_BUILD_DIR (build folder), CC / CXX (compiler, default
# the system's; CI uses clang), BRAID_SAN_CXXFLAGS (extra compiler flags),
# BRAID_SAN_FUZZ=1 (address, clang: also build the libFuzzer targets, so that
# tools/scripts/fuzz.sh runs them from this build instead of a second one),
# BRAID_SAN_TARGETS (ninja targets to build, default all), BRAID_SAN_JOBS
# (ninja and ctest -j, default nproc), BRAID_SAN_BUILD_TYPE (CMake build type,
# default RelWithDebInfo), BRAID_SAN_DEBUG_FLAG (default -g; CI:
# -gline-tables-only), BRAID_SAN_TESTS (ctest -R regex: run
# only these tests), BRAID_SAN_EXCLUDE (ctest -E regex: leave these out, on top
# of the exclusions below).
set -euo pipefail
mode="${1:-address}"
step="${2:-all}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
case "$mode" in
  address) build="${BRAID_SAN_BUILD_DIR:-$root/build-asan}" sanitize=address,undefined
           flags="-fno-sanitize-recover=all" ;;
  thread)  build="${BRAID_SAN_BUILD_DIR:-$root/build-tsan}" sanitize=thread flags="" ;;
  *) echo "usage: $0 [address|thread] [all|build|test]" >&2; exit 2 ;;
esac
case "$step" in all|build|test) ;; *) echo "usage: $0 [address|thread] [all|build|test]" >&2; exit 2 ;; esac
jobs="${BRAID_SAN_JOBS:-$(nproc)}"

start=$SECONDS
if [[ "$step" != test ]]; then
  fuzz=OFF
  [[ "$mode" == address && "${BRAID_SAN_FUZZ:-0}" == 1 ]] && fuzz=ON
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${BRAID_SAN_BUILD_TYPE:-RelWithDebInfo}" \
    -DBRAID_SANITIZE="$sanitize" -DBRAID_SANITIZE_DEBUG_FLAG="${BRAID_SAN_DEBUG_FLAG:--g}" \
    -DBRAID_FUZZ="$fuzz" "-DCMAKE_C_FLAGS=$flags" "-DCMAKE_CXX_FLAGS=$flags${BRAID_SAN_CXXFLAGS:+ $BRAID_SAN_CXXFLAGS}" >/dev/null
  # shellcheck disable=SC2086 # a list of targets
  ninja -C "$build" -j"$jobs" ${BRAID_SAN_TARGETS:-}
fi
built=$SECONDS
if [[ "$step" == build ]]; then
  echo "sanitize.sh $mode: build $((built - start)) s"
  exit 0
fi

# halt_on_error: the first report fails the test that caused it, instead of a
# line in a log nobody reads. Leaks count (ASan's LeakSanitizer).
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=1:detect_leaks=1:detect_stack_use_after_return=1"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
# report_thread_leaks=0: the multi-process test harness ends each rank with
# _exit() (tests/integration/harness_child.cc), which skips the static
# destructor that joins the rendezvous root's thread (core/bootstrap/root.cc);
# TSan then reports that finished thread as leaked in every rank-0 process.
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:report_thread_leaks=0"

run=()
if [[ "$mode" == thread ]]; then
  # TSan maps its shadow at fixed addresses; kernels with more than 28 bits of
  # mmap randomisation (vm.mmap_rnd_bits, e.g. 32 on recent Ubuntu) place
  # libraries inside that range and TSan dies with "unexpected memory mapping".
  # Turning off address randomisation for the test processes (setarch -R, which
  # children inherit) avoids it without touching the machine's sysctls.
  bits="$(cat /proc/sys/vm/mmap_rnd_bits 2>/dev/null || echo 0)"
  if [[ "$bits" -gt 28 ]]; then
    if setarch "$(uname -m)" -R true 2>/dev/null; then
      run=(setarch "$(uname -m)" -R)
    else
      echo "sanitize.sh: vm.mmap_rnd_bits=$bits breaks TSan and setarch -R is not allowed here;" \
           "run 'sysctl -w vm.mmap_rnd_bits=28' as root first" >&2
      exit 2
    fi
  fi
fi

filter=()
[[ -n "${BRAID_SAN_TESTS:-}" ]] && filter=(-R "$BRAID_SAN_TESTS")
exclude="${BRAID_SAN_EXCLUDE:-}"
# Left out under TSan: SimulatedCollectives.RankCount1000/1024 simulate 1000+
# ranks on one thread (nothing concurrent for TSan to check) and TSan's ~10x
# slowdown pushes them past their 120 s limit on a 2-core machine; the
# MatrixBig cases with 4-8 ranks run 4-8 TSan processes on 2 cores and pass the
# harness's 90 s limit (N1-N3 run the same code paths and stay in).
if [[ "$mode" == thread ]]; then
  exclude="${exclude:+$exclude|}SimulatedCollectives\\.RankCount10|MatrixBig\\.Inline/N[4-8]"
fi
[[ -n "$exclude" ]] && filter+=(-E "$exclude")
rc=0
"${run[@]}" ctest --test-dir "$build" --output-on-failure -j"$jobs" --timeout 600 "${filter[@]}" || rc=$?
echo "sanitize.sh $mode: build $((built - start)) s, tests $((SECONDS - built)) s, exit $rc"
exit $rc
