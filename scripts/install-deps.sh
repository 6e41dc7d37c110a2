#!/bin/sh
# install-deps.sh -- install what a fresh Debian 12 machine lacks to build and
# test gqp: a C toolchain, CMake, pkg-config, libyaml, Criterion, sqlite3,
# python3 and GNU readline (the shell's line editing; optional at build
# time), then DuckDB 1.5.5 and its tpch extension from PyPI for the TPC-H
# tests, and pyarrow and pandas for the Python package's tests (python/)
# (python3 -m pip install --user; python3-pip from apt when pip is
# missing). Asks apt-get only for missing packages (checked with dpkg -s), and
# uses sudo only when not already root. CUDA is optional and never installed
# here: the build uses nvcc when it finds one (see docs/gpu.md).
# With --clang it also installs clang and its runtimes (ASan, UBSan,
# libFuzzer) for scripts/test-sanitize.sh and tests/fuzz/run.sh.
set -eu

PKGS="cmake gcc g++ make pkg-config libyaml-dev libcriterion-dev sqlite3 python3 libreadline-dev"
if [ "${1:-}" = "--clang" ]; then
    PKGS="$PKGS clang libclang-rt-dev"
fi

# DuckDB with its tpch extension: `gqp gen tpch` (tests/tpch, bench/tpch.py);
# pyarrow and pandas: python/tests (python.gqp)
PY_PKGS="duckdb==1.5.5 duckdb-extension-tpch==1.5.5 pyarrow==26.0.1 pandas==3.1.1"
have_duckdb() {
    python3 -c "import duckdb, duckdb_extension_tpch; assert duckdb.__version__ == '1.5.5'" \
        >/dev/null 2>&1 && python3 -c "import pyarrow, pandas" >/dev/null 2>&1
}
if ! have_duckdb && ! python3 -m pip --version >/dev/null 2>&1; then
    PKGS="$PKGS python3-pip"
fi

# pip_deps: install PY_PKGS for this user unless present (Debian 12 marks
# its python3 externally managed: --break-system-packages, which a --user
# install needs there and older pips lack).
pip_deps() {
    have_duckdb && return 0
    echo "install-deps: pip installing $PY_PKGS"
    # shellcheck disable=SC2086 # the package list is meant to split
    python3 -m pip install --user --break-system-packages $PY_PKGS ||
        python3 -m pip install --user $PY_PKGS
}

missing=""
for p in $PKGS; do
    if ! dpkg -s "$p" >/dev/null 2>&1; then
        missing="$missing $p"
    fi
done
if [ -z "$missing" ]; then
    echo "install-deps: all system packages present"
    pip_deps
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
pip_deps
