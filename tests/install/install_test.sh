#!/bin/sh
# install_test.sh BUILD_DIR WORKDIR
#
# Installs the build in BUILD_DIR into a fresh prefix under WORKDIR and
# checks what an installed libgqp promises: the header, the static library,
# the pkg-config file, the CMake package (a tiny project builds
# examples/hello.c with find_package(gqp) and runs it), the cost files in
# <prefix>/share/gqp, and that the installed gqp binary and the installed
# hello read their cost model from the prefix, not from the source tree
# (the prefix is also moved after install: the binary finds it from its
# own path). Prints one line per failed check; exit 1 if any failed.
set -u
if [ $# -ne 2 ]; then
    echo "usage: install_test.sh BUILD_DIR WORKDIR" >&2
    exit 1
fi
B=$1
W=$2
SRC=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$W"
mkdir -p "$W" || exit 1
W=$(cd "$W" && pwd)
# the prefix lies outside the build tree (programs run from inside it read
# the source tree's configs/ by design)
T=$(mktemp -d "${TMPDIR:-/tmp}/gqp-install.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
P=$T/prefix
fails=0
fail() {
    fails=$((fails + 1))
    echo "FAIL: $1"
}

cmake --install "$B" --prefix "$P" >"$W/install.log" 2>&1 || {
    fail "cmake --install"
    cat "$W/install.log"
    exit 1
}
for f in include/gqp.h share/gqp/cost-cpu-2core.yaml share/gqp/cost-h100.yaml bin/gqp; do
    [ -e "$P/$f" ] || fail "installed $f missing"
done
ls "$P"/lib*/libgqp.a >/dev/null 2>&1 || fail "installed libgqp.a missing"
# libgqp.so (a build with GQP_BUILD_SHARED) and the Arrow header; python/gqp
# loads the installed library (not in sanitizer builds: Python cannot load
# an ASan library)
[ -e "$P/include/gqp_arrow.h" ] || fail "installed include/gqp_arrow.h missing"
if [ -e "$B/libgqp.so" ]; then
    so=$(ls "$P"/lib*/libgqp.so 2>/dev/null | head -1)
    if [ -z "$so" ]; then
        fail "installed libgqp.so missing"
    elif ! echo "${GQP_APP_CFLAGS:-}" | grep -q sanitize &&
        python3 -c "import pyarrow" >/dev/null 2>&1; then
        GQP_LIBRARY=$so PYTHONPATH=$SRC/python python3 -c \
            "import gqp; assert gqp.connect().sql('SELECT 41 + 1 AS x').to_pylist() == [{'x': 42}]" \
            >"$W/python.out" 2>&1 || fail "python/gqp on the installed libgqp.so: $(tail -1 "$W/python.out")"
    fi
fi
ls "$P"/lib*/cmake/gqp/gqpConfig.cmake >/dev/null 2>&1 || fail "gqpConfig.cmake missing"
ls "$P"/lib*/cmake/gqp/gqpConfigVersion.cmake >/dev/null 2>&1 || fail "gqpConfigVersion missing"
ls "$P"/lib*/pkgconfig/gqp.pc >/dev/null 2>&1 || fail "gqp.pc missing"

# a project of its own that finds gqp with find_package
mkdir -p "$W/app"
cp "$SRC/examples/hello.c" "$W/app/"
cat >"$W/app/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(hello_gqp C)
find_package(gqp 0.1 REQUIRED)
add_executable(hello hello.c)
target_link_libraries(hello PRIVATE gqp::gqp)
CM
if cmake -S "$W/app" -B "$W/app/build" -DCMAKE_PREFIX_PATH="$P" \
    ${GQP_APP_CC:+-DCMAKE_C_COMPILER="$GQP_APP_CC"} -DCMAKE_C_FLAGS="${GQP_APP_CFLAGS:-}" \
    -DCMAKE_EXE_LINKER_FLAGS="${GQP_APP_LDFLAGS:-}" >"$W/app.log" 2>&1 &&
    cmake --build "$W/app/build" >>"$W/app.log" 2>&1; then
    if "$W/app/build/hello" >"$W/hello.out" 2>&1; then
        [ -s "$W/hello.out" ] || fail "hello printed nothing"
    else
        fail "hello (find_package build) exited $?"
        cat "$W/hello.out"
    fi
else
    fail "find_package(gqp) project did not configure or build"
    tail -30 "$W/app.log"
fi

# the installed binary's cost model comes from the prefix (no calibrated
# file of the person running the tests in the way)
export XDG_CONFIG_HOME="$W/xdg-none"
"$P/bin/gqp" explain --device cpu -e "SELECT 1" >/dev/null 2>"$W/explain.err"
grep -q "cost model: $P/bin/../share/gqp/cost-" "$W/explain.err" ||
    fail "installed gqp does not read its cost model from $P/share/gqp: $(head -1 "$W/explain.err")"
grep -q "$SRC/configs" "$W/explain.err" && fail "installed gqp read the source tree's configs/"
# ... also after the prefix moved
mv "$P" "$T/moved"
"$T/moved/bin/gqp" explain --device cpu -e "SELECT 1" >/dev/null 2>"$W/explain2.err"
grep -q "cost model: $T/moved/bin/../share/gqp/cost-" "$W/explain2.err" ||
    fail "moved prefix: cost model not from it: $(head -1 "$W/explain2.err")"
# ... and $GQP_COST_DIR still wins
mkdir -p "$W/costs"
cp "$SRC"/configs/cost-*.yaml "$W/costs/" # every shipped one: the GPU picks its own
GQP_COST_DIR=$W/costs "$T/moved/bin/gqp" explain --device cpu -e "SELECT 1" >/dev/null \
    2>"$W/explain3.err"
grep -q "cost model: $W/costs/cost-" "$W/explain3.err" ||
    fail "GQP_COST_DIR not used: $(head -1 "$W/explain3.err")"

if [ $fails -ne 0 ]; then
    echo "install_test: $fails failed"
    exit 1
fi
echo "install_test: all passed"
