#!/usr/bin/env bash
# Quick start, step 2: install what is missing, build, run the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/scripts/install-deps.sh
tools/scripts/build.sh
build="${BRAID_BUILD_DIR:-build}"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" --timeout 300
