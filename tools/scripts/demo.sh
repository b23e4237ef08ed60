#!/usr/bin/env bash
# Quick start, step 1: install what is missing, build, and run a 4-rank float
# all-reduce sweep on this machine (nccl-tests columns, every result checked):
# through shared memory, or over TCP loopback with BRAID_TRANSPORT=tcp.
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/scripts/install-deps.sh
tools/scripts/build.sh
build="${BRAID_BUILD_DIR:-build}"
exec "$build/tools/braid-run/braid-run" -n 4 --timeout 600 -- \
  "$build/perf/braid-perf/braid-perf" allreduce -b 8 -e 64M -f 4 -d float -o sum
