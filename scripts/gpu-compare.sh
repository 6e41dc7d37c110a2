#!/bin/bash
# gpu-compare.sh BASE_SRC -- the working tree against an earlier source tree
# in one run on the lent GPU machine: both are built the same way, then SSB
# (GQP_SSB_SF, default 20) and seed 004 (GQP_BENCH_ROWS, default 5000000)
# are timed with each build under --device gpu, so a change's effect on the
# hot paths is measured within one run on one device (bench/ssb.py and
# bench/seed004.py: warm-up, median of 5, DuckDB with all cores once).
# BASE_SRC is a source tree, e.g. made here with
#   mkdir -p .base && git archive <commit> | tar -x -C .base
# and carried (.base is git-ignored). Tables and logs go to $OUT.
set -u
BASE=${1:?usage: gpu-compare.sh BASE_SRC}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-$ROOT/gpu-out}
mkdir -p "$OUT"
# dependencies and the current build exactly as gpu-check.sh makes them
bash scripts/gpu-check.sh none > "$OUT/prepare.log" 2>&1 || { tail -20 "$OUT/prepare.log"; exit 1; }
PFX=/tmp/gqp-deps
export PKG_CONFIG_PATH=$PFX/usr/lib/x86_64-linux-gnu/pkgconfig:$PFX/usr/share/pkgconfig
export LD_LIBRARY_PATH=$PFX/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
export PATH=$PFX/usr/bin:$PATH
if ls .whl/*.whl >/dev/null 2>&1; then export PYTHONPATH=/tmp/site; fi
T0=$(date +%s)
cmake -S "$BASE" -B build-base -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_PREFIX_PATH=$PFX/usr -DCMAKE_LIBRARY_PATH=$PFX/usr/lib/x86_64-linux-gnu \
    -DGQP_BUILD_TESTS=OFF > "$OUT/build-base.log" 2>&1 &&
    cmake --build build-base -j"$(nproc)" >> "$OUT/build-base.log" 2>&1 ||
    { tail -20 "$OUT/build-base.log"; exit 1; }
echo "base build: $(( $(date +%s) - T0 )) s"
SF=${GQP_SSB_SF:-20}
ROWS=${GQP_BENCH_ROWS:-5000000}
for b in base gpu; do
    dir=build-$b
    nd=""
    [ $b = base ] && nd="--no-duckdb"
    T0=$(date +%s)
    PYTHONUNBUFFERED=1 python3 bench/ssb.py --sf "$SF" --build $dir --work /tmp/ssb-bench \
        --device gpu --threads "$(nproc)" $nd > "$OUT/ssb-$b.md" 2> "$OUT/ssb-$b.log"
    echo "ssb sf $SF with $dir: rc=$? ($(( $(date +%s) - T0 )) s)"
    T0=$(date +%s)
    PYTHONUNBUFFERED=1 python3 bench/seed004.py --rows "$ROWS" --build $dir --work /tmp/bench-work \
        --device gpu --threads "$(nproc)" --no-sqlite > "$OUT/seed004-$b.md" 2> "$OUT/seed004-$b.log"
    echo "seed004 $ROWS rows with $dir: rc=$? ($(( $(date +%s) - T0 )) s)"
done
for f in ssb seed004; do
    echo "==== $f: base"
    cat "$OUT/$f-base.md"
    echo "==== $f: this tree"
    cat "$OUT/$f-gpu.md"
done
