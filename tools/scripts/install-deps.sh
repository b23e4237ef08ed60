#!/usr/bin/env bash
# Installs the Debian 12 packages braid's build, tests and demo need, and only
# those that are missing (so a second run costs nothing). Needs root or sudo.
set -euo pipefail
# libucx-dev, libibverbs-dev: the UCX and ibverbs transports' headers (UCX and
# libibverbs themselves are loaded at run time).
packages=(cmake ninja-build g++ pkg-config libgtest-dev libbenchmark-dev libcli11-dev libhwloc-dev
          nlohmann-json3-dev iproute2 libucx-dev libibverbs-dev)
[ "${BRAID_WITH_ANCHORS:-0}" = 1 ] && packages+=(openmpi-bin libopenmpi-dev)
# Debian's PyTorch, for the torch.distributed backend's tests (plugins/torch;
# they skip without it): a large download, so CI asks for it and the
# newcomer's test run does not.
[ "${BRAID_WITH_TORCH:-0}" = 1 ] && packages+=(python3-torch)
# The sanitizer and fuzzing phases of CI (.ci/run): clang with its sanitizer
# and libFuzzer runtimes, llvm-symbolizer for readable reports, clang-format.
[ "${BRAID_WITH_SANITIZERS:-0}" = 1 ] && packages+=(clang libclang-rt-14-dev llvm clang-format)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -ne 0 ] && sudo="sudo"
echo "braid: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
