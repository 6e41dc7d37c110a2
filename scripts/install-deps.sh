#!/bin/sh
# install-deps.sh -- install what a fresh Debian 12 machine lacks to build and
# test gqp: a C toolchain, CMake, pkg-config, libyaml, Criterion, sqlite3 and
# python3. Asks apt-get only for missing packages (checked with dpkg -s), and
# uses sudo only when not already root. CUDA is optional and never installed
# here: the build uses nvcc when it finds one (see docs/gpu.md).
# With --clang it also installs clang and its runtimes (ASan, UBSan,
# libFuzzer) for scripts/test-sanitize.sh and tests/fuzz/run.sh.
set -eu

PKGS="cmake gcc g++ make pkg-config libyaml-dev libcriterion-dev sqlite3 python3"
if [ "${1:-}" = "--clang" ]; then
    PKGS="$PKGS clang libclang-rt-dev"
fi

missing=""
for p in $PKGS; do
    if ! dpkg -s "$p" >/dev/null 2>&1; then
        missing="$missing $p"
    fi
done
if [ -z "$missing" ]; then
    echo "install-deps: all dependencies present"
    exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
    SUDO=""
elif command -v sudo >/dev/null 2>&1; then
    SUDO="sudo"
else
    echo "install-deps: need root or sudo to install:$missing" >&2
    exit 1
fi
echo "install-deps: installing$missing"
$SUDO apt-get update
# shellcheck disable=SC2086 # the package list is meant to split
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends $missing
