#!/usr/bin/env bash
# braid beside NCCL on this GPU machine: `braid-perf allreduce --memory device`
# and NCCL through PyTorch (perf/anchors/nccl_perf.py), same rank counts, same
# sizes, one run. Rank r uses GPU r % device count: with one GPU every rank is
# on device 0, and NCCL, which refuses two ranks on one GPU of one host, gets
# one NCCL_HOSTID per rank and runs over its Socket transport on lo; braid runs
# over TCP on lo too (BRAID_TRANSPORT=tcp; --transport auto lets it pick).
# Prints one table per rank count (size, braid busbw, NCCL busbw, braid / NCCL)
# and writes results.csv and results.json to --out (default BUILD/gpu-compare).
# Every run has a deadline (--timeout seconds, then its process group is
# killed) and every result is checked.
#
# Installs and builds nothing (no internet there); build first:
#   cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBRAID_CUDA=on && ninja -C build braid-perf braid-run
#   tools/scripts/gpu-compare.sh --build build --ranks 2,4 --sizes 16:256M --iters 20
# Any perf/anchors/compare.py option may follow and overrides the defaults
# below (--reps 3, --braid-cuda-stream, --transport auto, --timeout 600 ...);
# --libraries braid,nccl,nccl-braid adds NCCL over braid's net plugin.
# PYTHON: a python3 whose torch has CUDA (default /opt/torch/.venv/bin/python3).
set -euo pipefail
here=$(pwd)
cd "$(dirname "$0")/../.."
py=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$py" ] || py=python3

# --build is taken out of the arguments: it is resolved against the caller's
# directory, not the repository's, and names the default --out.
build=build
rest=()
while [ $# -gt 0 ]; do
  case $1 in
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --build=*) build=${1#--build=}; shift ;;
    *) rest+=("$1"); shift ;;
  esac
done
case $build in /*) ;; *) build=$here/$build ;; esac
# libbraid-cuda.so: the CUDA module libbraid loads from its own directory to
# stage device buffers; without it braid-perf --memory device fails.
needed=(perf/braid-perf/braid-perf tools/braid-run/braid-run libbraid-cuda.so)
# --libraries ...nccl-braid: NCCL over braid's net plugin, which it loads from the build.
[[ " ${rest[*]-} " == *nccl-braid* ]] && needed+=(plugins/nccl-net/libnccl-net-braid.so)
for file in "${needed[@]}"; do
  if [ ! -e "$build/$file" ]; then
    echo "gpu-compare: $build/$file is missing: ninja -C $build braid-perf braid-run nccl-net-braid (a CUDA" \
      "build: -DBRAID_CUDA=on)" >&2
    exit 2
  fi
done

# 16:256M by 4 lands on 256 MiB (8:256M would stop at 128 MiB); one repetition
# and a 240 s deadline per run keep the 2- and 4-rank sweeps of both libraries
# within a short GPU lease; --reps 3 gives medians where time allows.
exec "$py" perf/anchors/compare.py --build "$build" --out "$build/gpu-compare" \
  --libraries braid,nccl --collectives allreduce --braid-memory device \
  --nccl-python "$py" --gloo-python "$py" \
  --ranks 2,4 --sizes 16:256M --factor 4 --iters 20 --warmup 5 --reps 1 --timeout 240 \
  --no-install --no-build ${rest[@]+"${rest[@]}"}
