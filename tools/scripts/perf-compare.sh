#!/usr/bin/env bash
# braid side by side with Open MPI, MPICH and Gloo (PyTorch) on this machine,
# or across an emulated cluster (--fabric hosts=4,rate=1gbit, root needed).
# Installs what is missing, builds, sweeps, prints one table per collective and
# writes CSV, JSON and PNG plots. All options: perf-compare.sh --help
#   tools/scripts/perf-compare.sh --ranks 2,4 --sizes 8:32M --reps 3
set -euo pipefail
cd "$(dirname "$0")/../.."
# Debian's python3 is the one that sees Debian's python3-torch and matplotlib.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
exec "$py" perf/anchors/compare.py "$@"
