#!/usr/bin/env bash
# Configures and builds braid (Release) into ${BRAID_BUILD_DIR:-build}.
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${BRAID_BUILD_DIR:-build}"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${BRAID_BUILD_TYPE:-Release}" "$@" >/dev/null
ninja -C "$build" -j"$(nproc)"
