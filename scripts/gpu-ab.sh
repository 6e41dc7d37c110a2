#!/bin/bash
# gpu-ab.sh [QUERY.sql ...] -- A/B timing on the lent GPU machine: this
# checkout (built by gpu-check.sh into build-gpu) against an older revision
# archived into .oldrev/ and carried (git archive REV | tar x -C .oldrev),
# in one process each per round, two rounds, on SSB SF 20 (generated when
# missing; GQP_AB_SF sets another SF), then every query's answer under
# --device gpu against --device cpu (md5 of the CSV). Default queries: the
# 13 SSB queries. Prints one line per build and round (bench_gqp medians).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
[ -d .oldrev ] || { echo "gpu-ab.sh: no .oldrev/ (git archive REV | tar x -C .oldrev)"; exit 2; }
bash scripts/gpu-check.sh none > /dev/null 2>&1 || { echo "gpu-ab.sh: build failed"; exit 1; }
PFX=/tmp/gqp-deps
export LD_LIBRARY_PATH=$PFX/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
(cd .oldrev && cmake -S . -B b -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_PREFIX_PATH=$PFX/usr -DCMAKE_LIBRARY_PATH=$PFX/usr/lib/x86_64-linux-gnu > /tmp/oldb.log 2>&1 &&
    cmake --build b -j"$(nproc)" --target bench_gqp gqp >> /tmp/oldb.log 2>&1) ||
    { tail -20 /tmp/oldb.log; exit 1; }
SF=${GQP_AB_SF:-20}
D=/tmp/ssb-bench/ssb-sf$SF
[ -f $D/gqp.yaml ] || build-gpu/gqp gen ssb --sf $SF --out $D > /dev/null
Q="$*"
[ -n "$Q" ] || Q=$(ls tests/ssb/queries/*.sql)
times() { "$1" -c $D/gqp.yaml --device gpu --repeat 9 $Q | grep -o "^\S*sql rows=[0-9]* exec_ms=[0-9.]*" |
    sed 's/^.*\///; s/ rows=[0-9]*//; s/exec_ms=//' | paste -sd' '; }
for r in 1 2; do
    echo "new $r: $(times build-gpu/bench_gqp)"
    echo "old $r: $(times .oldrev/b/bench_gqp)"
done
for q in $Q; do
    a=$(build-gpu/gqp run -c $D/gqp.yaml --device gpu --mode csv $q | md5sum)
    b=$(build-gpu/gqp run -c $D/gqp.yaml --device cpu --mode csv $q | md5sum)
    [ "$a" = "$b" ] || echo "DIFF $q (gpu vs cpu)"
done
echo "answers checked"
