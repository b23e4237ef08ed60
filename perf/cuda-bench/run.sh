#!/usr/bin/env bash
# braid-cuda-bench on a GPU machine: first --verify (every kernel against the
# CPU kernels, bit for bit), then the timed sweep at 1, 4, 16, 64 and 256 MiB.
#
# Usage: perf/cuda-bench/run.sh OUT_DIR [BUILD_DIR] [more braid-cuda-bench flags]
#   BUILD_DIR: the build tree holding libbraid-cuda.so (default: build).
#   VERIFY=0 skips the check.
# Writes OUT_DIR/verify.txt, OUT_DIR/cuda-bench.txt (the table) and
# OUT_DIR/cuda-bench.csv. Exits nonzero if either step failed.
set -uo pipefail

out=${1:?usage: run.sh OUT_DIR [BUILD_DIR] [flags...]}
build=${2:-build}
shift $(($# < 2 ? $# : 2))
bench=$build/perf/cuda-bench/braid-cuda-bench
module=$build/libbraid-cuda.so
for f in "$bench" "$module"; do
  [[ -e $f ]] || { echo "run.sh: no $f (build the targets braid_cuda and braid-cuda-bench)" >&2; exit 2; }
done
# The module needs libcudart.so.13: the toolkit's, unless the loader finds one already.
cuda=${CUDA_HOME:-/usr/local/cuda}
[[ -d $cuda/lib64 ]] && export LD_LIBRARY_PATH=$cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p "$out"
status=0
if [[ ${VERIFY:-1} != 0 ]]; then
  "$bench" -m "$module" --verify | tee "$out/verify.txt" || status=$?
fi
"$bench" -m "$module" --sizes 1M,4M,16M,64M,256M --csv "$out/cuda-bench.csv" "$@" |
  tee "$out/cuda-bench.txt" || status=$?
exit $status
