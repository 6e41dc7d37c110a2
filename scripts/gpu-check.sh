#!/bin/bash
# gpu-check.sh [tests|prim|bench|ssb|tpch-check|tpch|final|placement|all] -- the one-call GPU workflow on the lent
# GPU machine (see docs/gpu.md). Prepares libyaml/Criterion/sqlite3 from the
# .deb files carried in .debs/ and DuckDB (+ its tpch extension) from the
# wheels in .whl/, builds for
# sm_90, then
#   tests: the GPU unit tests, compute-sanitizer memcheck over them, the SQL
#          suite (tests/sql, select5, seed 004) under --device gpu and cpu,
#          and the whole ctest run;
#   prim:  each GPU twin against CUB/Thrust (bench_prim_gpu);
#   seed004: the seed-004 benchmark alone (GQP_BENCH_ROWS);
#   bench: prim, the seed-004 benchmark (gqp GPU / CPU / auto / SQLite /
#          DuckDB; GQP_BENCH_ROWS sets the sizes) and ssb;
#   ssb:   SSB SF 10 and 20 (GQP_SSB_SF) under GQP_SSB_DEVICES (default
#          gpu,gpu-sort: the chosen aggregation plan and the sort plan),
#          and Crystal's hand-written kernels on the same data when the
#          carried .crystal/ holds crystal_run.sh (GQP_CRYSTAL_TIMEOUT s
#          per SF, default 900, its build included); GQP_SSB_ARGS: more
#          bench/ssb.py options, e.g. SF 100 on the H100 under a 16 GB
#          budget: GQP_SSB_SF="--sf 100" GQP_SSB_DEVICES=gpu,auto
#          GQP_SSB_ARGS="--memory-limit 16GB --no-lineorder-tbl --answers"
#          (numpy's wheel in .whl/ for DuckDB's lineorder from bin/);
#   oom:   the out-of-memory ctests (oom.*, test_memory) and
#          compute-sanitizer over test_memory's GPU cases;
#   tpch-check: TPC-H's 22 queries at GQP_TPCH_CHECK_SF (default 1)
#          against the official answers under gpu, auto, cpu and the forced
#          GPU aggregation plans (tests/tpch/check.py);
#   tpch:  bench/tpch.py at GQP_TPCH_SF (default "--sf 10") with gqp gpu and
#          auto vs DuckDB with all cores (GQP_TPCH_ARGS=--gen-only first
#          when generating and timing do not fit one call);
#   memlimit: every SSB SF 20 / TPC-H SF 10 query under memory_limit = a
#          quarter of the bytes it reads (bench/memlimit.py; GQP_MEMLIMIT_SETS,
#          GQP_MEMLIMIT_DEVICE gpu, auto, gpu-noprefetch (without the
#          chunks' copies ahead), gpu-peak / auto-peak (GQP_BUDGET_PEAK=1)
#          or several; GQP_MEMLIMIT_HOG=MIB: beside
#          a process holding all but MIB of the GPU instead)
#   final: ctest + calibrate, then bench; placement: calibrate, then
#          bench/placement.py with that cost file (placement-shipped: with
#          the configs/ one);
#   topk:  ORDER BY ... LIMIT (bench/topk) at GQP_TOPK_ROWS rows (default
#          50M) on gpu and cpu, the radix select and every row sorted;
#   fixedcost: EXPLAIN ANALYZE (per-node times) of seed 004's single-row
#          queries at 5M rows and SSB SF 1 Q1.1-Q4.1 on the GPU, warm;
#   tpchvar: settings A/B (GQP_TPCHVAR) on bench_prim_gpu's map and
#          select and on TPC-H SF 1 (GQP_TPCHVAR_SF, _DEVICES);
#   any other word (e.g. none): prepare and build only.
# Logs and tables go to $OUT (or ./gpu-out); a summary is printed last.
set -u
MODE=${1:-all}
# several modes may be given, comma separated (e.g. ctest,tpch-check)
has() { case ",$MODE," in *",$1,"*) return 0 ;; esac; return 1; }
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-$ROOT/gpu-out}
# the device tool returns at most 8 files: logs go to $OUT/logs and are
# packed into logs.tgz at the end; summary and tables stay at the top
LOG=$OUT/logs
mkdir -p "$OUT" "$LOG"
SUM=$OUT/summary.txt
: > "$SUM"
say() { echo "$*" | tee -a "$SUM"; }
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

# --- dependencies from carried packages ---
PFX=/tmp/gqp-deps
if [ -d .debs ]; then
    mkdir -p $PFX
    for f in .debs/*.deb; do dpkg -x "$f" $PFX; done
    for pc in $(find $PFX -name '*.pc'); do sed -i "s|^prefix=.*|prefix=$PFX/usr|" "$pc"; done
    export PKG_CONFIG_PATH=$PFX/usr/lib/x86_64-linux-gnu/pkgconfig:$PFX/usr/share/pkgconfig
    export LD_LIBRARY_PATH=$PFX/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
    export PATH=$PFX/usr/bin:$PATH
fi
# wheels: .whl/ (DuckDB and its tpch extension); .pyw1/ and .pyw2/ (pyarrow,
# then pandas and numpy: together they exceed one call's carry, so they go
# in two calls back to back while the machine is held; /tmp/site keeps them)
for w in .whl .pyw1 .pyw2; do
    ls $w/*.whl >/dev/null 2>&1 &&
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
            --target /tmp/site $w/*.whl
done
[ -d /tmp/site ] && export PYTHONPATH=/tmp/site
say "device: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>&1)"
say "host: $(nproc) cores, $(free -g | awk '/Mem/{print $2}') GiB; nvcc $(nvcc --version | tail -2 | head -1)"

# --- build ---
# a warm machine may keep build-gpu/ from an earlier call, and the copied
# tree's timestamps need not make a changed source newer than its object:
# start afresh whenever the sources' contents changed
SRCHASH=$(find CMakeLists.txt cmake include libgqp executor operators planner primitives catalog \
    sqlfront cost cli bench tests -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' \
    -o -name '*.cuh' -o -name '*.txt' -o -name '*.cmake' \) -print0 2>/dev/null | sort -z |
    xargs -0 cat | md5sum)
if [ -d build-gpu ] && [ "$(cat build-gpu/.srchash 2>/dev/null)" != "$SRCHASH" ]; then
    rm -rf build-gpu
fi
T0=$(date +%s)
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH=$PFX/usr -DCMAKE_LIBRARY_PATH=$PFX/usr/lib/x86_64-linux-gnu \
    > "$LOG/build.log" 2>&1 &&
    cmake --build build-gpu -j"$(nproc)" >> "$LOG/build.log" 2>&1
RC=$?
say "build: rc=$RC in $(( $(date +%s) - T0 )) s"
[ $RC -eq 0 ] && echo "$SRCHASH" > build-gpu/.srchash
if [ $RC -ne 0 ]; then tail -40 "$LOG/build.log"; exit 1; fi
B=build-gpu

if has tests || has all; then
    # 1. GPU twins against CPU twins
    T0=$(date +%s)
    $B/tests/test_prim_gpu --jobs 1 --verbose > "$LOG/test_prim_gpu.log" 2>&1
    say "test_prim_gpu: rc=$? $(grep -a 'Synthesis' "$LOG/test_prim_gpu.log" | tail -1) ($(( $(date +%s) - T0 )) s)"
    # 2. compute-sanitizer memcheck over the GPU test binary (small sizes)
    T0=$(date +%s)
    GQP_GPU_TEST_SMALL=1 timeout 300 compute-sanitizer --tool memcheck --leak-check full \
        $B/tests/test_prim_gpu --jobs 1 > "$LOG/sanitizer.log" 2>&1
    say "compute-sanitizer: rc=$? $(grep -a 'ERROR SUMMARY' "$LOG/sanitizer.log" | tail -1) ($(( $(date +%s) - T0 )) s)"
    # 3. SQL suite under both placements
    for dev in gpu cpu; do
        T0=$(date +%s)
        GQP_SLT_DEVICE=$dev $B/tests/gqp_slt tests/sql/*.test \
            shared/slt/select5.test > "$LOG/slt-$dev.log" 2>&1
        say "slt --device $dev: rc=$? ($(( $(date +%s) - T0 )) s)"
        grep -a "records" "$LOG/slt-$dev.log" | sed 's/^/    /' | tee -a "$SUM" >/dev/null
    done
    # 4. seed 004: 13 queries, gpu vs sqlite and gpu vs cpu
    T0=$(date +%s)
    GQP_DEVICE=gpu sh tests/seed004/check.sh $B/gqp /tmp/seed004-gpu 1000000 > "$LOG/seed004-gpu.log" 2>&1
    say "seed004 check --device gpu (1M rows, vs sqlite3): rc=$? ($(( $(date +%s) - T0 )) s)"
    D=/tmp/seed004-gpu/data
    same=0; diff=0
    for q in tests/seed004/queries/q*.sql; do
        GQP_DEVICE=gpu $B/gqp run -c $D/gqp.yaml --mode csv "$q" | sort > /tmp/g.out
        GQP_DEVICE=cpu $B/gqp run -c $D/gqp.yaml --mode csv "$q" | sort > /tmp/c.out
        if cmp -s /tmp/g.out /tmp/c.out; then same=$((same+1)); else diff=$((diff+1)); echo "differs: $q" >> "$SUM"; fi
    done
    say "seed004 gpu vs cpu byte-identical: $same same, $diff differ"
    GQP_DEVICE=gpu $B/gqp explain --analyze -c $D/gqp.yaml -e \
        "SELECT id, uniformi, normali5 FROM test WHERE uniformi > 60 AND normali5 < 0" > "$LOG/explain-gpu.txt" 2>&1
    # 5. SSB: SF 0.1 against sqlite3 under cpu, auto and gpu; SF 1 against
    #    DuckDB under gpu and cpu; the plans of Q2.1 and Q4.1
    T0=$(date +%s)
    sh tests/ssb/check.sh $B/gqp /tmp/ssb-check 0.1 > "$LOG/ssb-check-sf0.1.log" 2>&1
    say "ssb check SF 0.1 vs sqlite3 (cpu, auto, gpu): rc=$? ($(( $(date +%s) - T0 )) s)"
    T0=$(date +%s)
    rm -rf /tmp/ssb-sf1 && $B/gqp gen ssb --sf 1 --out /tmp/ssb-sf1 > /dev/null 2>&1
    python3 tests/ssb/check_duckdb.py $B/gqp /tmp/ssb-sf1 --device gpu,cpu > "$LOG/ssb-check-sf1.log" 2>&1
    say "ssb check SF 1 vs DuckDB (gpu, cpu): rc=$? $(grep -c ' ok$' "$LOG/ssb-check-sf1.log") of 26 ok ($(( $(date +%s) - T0 )) s)"
    for q in q2.1 q4.1; do
        GQP_DEVICE=gpu $B/gqp explain --analyze -c /tmp/ssb-sf1/gqp.yaml tests/ssb/queries/$q.sql \
            > "$LOG/explain-ssb-$q.txt" 2>&1
    done
    # 5b. differential: random queries, --device gpu against --device cpu
    #     (the twins must agree), and gpu against sqlite3 on the CI feature set
    T0=$(date +%s)
    PYTHONUNBUFFERED=1 python3 tests/diff/gqpdiff.py --gqp-batch $B/tests/gqp_batch \
        --seeds ${GQP_DIFF_SEEDS:-1:2000} --features all --device gpu --compare-device cpu \
        --no-fail --max-repro 150 --report "$OUT/diff-gpu-vs-cpu.md" > "$LOG/diff-gpu-vs-cpu.log" 2>&1
    say "diff gpu vs cpu (all features): rc=$? $(grep -a 'checks' "$LOG/diff-gpu-vs-cpu.log" | tail -1) ($(( $(date +%s) - T0 )) s)"
    T0=$(date +%s)
    PYTHONUNBUFFERED=1 python3 tests/diff/gqpdiff.py --gqp-batch $B/tests/gqp_batch \
        --seeds ${GQP_DIFF_SEEDS:-1:2000} --device gpu --report "$LOG/diff-gpu-vs-sqlite.md" \
        > "$LOG/diff-gpu-vs-sqlite.log" 2>&1
    say "diff gpu vs sqlite3 (CI features): rc=$? $(grep -a 'checks' "$LOG/diff-gpu-vs-sqlite.log" | tail -1) ($(( $(date +%s) - T0 )) s)"
    # 6. calibrate the cost model on this GPU (configs/cost-<gpu>.yaml)
    T0=$(date +%s)
    $B/gqp calibrate --out "$OUT/cost-gpu.yaml" > "$LOG/calibrate.log" 2>&1
    say "calibrate: rc=$? ($(( $(date +%s) - T0 )) s)"
    # 7. everything through ctest (auto placement by the cost model)
    T0=$(date +%s)
    (cd $B && ctest -j8 --output-on-failure > "$LOG/ctest.log" 2>&1)
    say "ctest: rc=$? $(grep -a 'tests passed' "$LOG/ctest.log") ($(( $(date +%s) - T0 )) s)"
fi

if has memdev; then
    # tests/memory/check.sh device (ctest's oom.cli_device) traced, in the
    # background beside the other modes, bounded by GQP_MEMDEV_TIMEOUT
    ( T0=$(date +%s)
      timeout ${GQP_MEMDEV_TIMEOUT:-400} sh -x tests/memory/check.sh device $ROOT/$B/gqp \
          /tmp/memdev > "$LOG/memdev.log" 2>&1
      say "memory check device (oom.cli_device): rc=$? $(grep -a '^check.sh' "$LOG/memdev.log") ($(( $(date +%s) - T0 )) s)"
      grep -a "^FAIL" "$LOG/memdev.log" | head -10 | tee -a "$SUM" >/dev/null ) &
    MEMDEV_PID=$!
fi

if has python; then
    # the Python package (python/gqp) over this build's libgqp.so, on cpu,
    # auto and gpu (pyarrow and pandas from the carried wheels)
    T0=$(date +%s)
    GQP_LIBRARY=$ROOT/$B/libgqp.so PYTHONPATH=$ROOT/python:/tmp/site \
        python3 python/tests/test_gqp.py -v > "$LOG/python.log" 2>&1
    say "python.gqp: rc=$? $(tail -3 "$LOG/python.log" | tr '\n' ' ') ($(( $(date +%s) - T0 )) s)"
    grep -a -E "gpu|skipped" "$LOG/python.log" | head -20 | tee -a "$SUM" >/dev/null
fi

if has primtest; then
    # the GPU twins against the CPU twins, then compute-sanitizer over them
    # (small sizes; GQP_PRIM_FILTER picks tests, e.g. 'prim_gpu/seg*', and
    # GQP_SAN_FILTER those under the sanitizer, default the same)
    T0=$(date +%s)
    $B/tests/test_prim_gpu --jobs 1 ${GQP_PRIM_FILTER:+--filter="$GQP_PRIM_FILTER"} \
        > "$LOG/test_prim_gpu.log" 2>&1
    say "test_prim_gpu: rc=$? $(grep -a 'Synthesis' "$LOG/test_prim_gpu.log" | tail -1) ($(( $(date +%s) - T0 )) s)"
    grep -a -B2 -A6 "FAIL\|CRASH" "$LOG/test_prim_gpu.log" | head -40 | tee -a "$SUM" >/dev/null
    T0=$(date +%s)
    SANF=${GQP_SAN_FILTER:-${GQP_PRIM_FILTER:-}}
    GQP_GPU_TEST_SMALL=1 timeout 240 compute-sanitizer --tool memcheck \
        $B/tests/test_prim_gpu --jobs 1 ${SANF:+--filter="$SANF"} \
        > "$LOG/sanitizer.log" 2>&1
    say "compute-sanitizer: rc=$? $(grep -a 'ERROR SUMMARY' "$LOG/sanitizer.log" | tail -1) ($(( $(date +%s) - T0 )) s)"
fi

if has ctest; then
    # a chosen part of ctest (GQP_CTEST_R / GQP_CTEST_E regexes), e.g. the
    # GPU SQL suites: GQP_CTEST_R='gpu|arrow|python'
    T0=$(date +%s)
    (cd $B && timeout ${GQP_CTEST_TIMEOUT:-480} ctest -j${GQP_CTEST_J:-12} -R "${GQP_CTEST_R:-.}" \
        ${GQP_CTEST_E:+-E "$GQP_CTEST_E"} --output-on-failure > "$LOG/ctest.log" 2>&1)
    say "ctest -R '${GQP_CTEST_R:-.}': rc=$? $(grep -a 'tests passed' "$LOG/ctest.log") ($(( $(date +%s) - T0 )) s)"
    grep -a -A30 "The following tests FAILED" "$LOG/ctest.log" | tee -a "$SUM" >/dev/null
fi

if has oom; then
    # the out-of-memory tests (docs/memory.md): memory_limit, device
    # allocation fault injection, recovery on the CPU twins, and the
    # compute-sanitizer over the allocator / recovery unit tests
    T0=$(date +%s)
    (cd $B && ctest -j4 -R '^oom\.|unit.test_memory' --output-on-failure > "$LOG/ctest-oom.log" 2>&1)
    say "ctest oom: rc=$? $(grep -a 'tests passed' "$LOG/ctest-oom.log") ($(( $(date +%s) - T0 )) s)"
    grep -a "Test *#" "$LOG/ctest-oom.log" | sed 's/^/    /' | tee -a "$SUM" >/dev/null
    T0=$(date +%s)
    # (--report-api-errors no: the test's deliberate over-size cudaMallocAsync
    # is an API error by design)
    timeout 300 compute-sanitizer --tool memcheck --report-api-errors no $B/tests/test_memory \
        --jobs 1 --filter='memory_gpu/*' > "$LOG/sanitizer-oom.log" 2>&1
    say "compute-sanitizer test_memory: rc=$? $(grep -a 'ERROR SUMMARY' "$LOG/sanitizer-oom.log" | tail -1) ($(( $(date +%s) - T0 )) s)"
fi

if has final; then
    # the whole ctest under auto placement (the cost model decides per node)
    T0=$(date +%s)
    (cd $B && ctest -j8 --output-on-failure > "$LOG/ctest.log" 2>&1)
    say "ctest: rc=$? $(grep -a 'tests passed' "$LOG/ctest.log") ($(( $(date +%s) - T0 )) s)"
    $B/gqp calibrate --out "$OUT/cost-gpu.yaml" > "$LOG/calibrate.log" 2>&1
fi
has final && MODE="$MODE,bench"

if has prim || has bench || has all; then
    # each GPU twin against CUB/Thrust called directly on the same input
    T0=$(date +%s)
    $B/bench_prim_gpu --n 67108864 --reps 20 > "$OUT/prim-gpu.md" 2>&1
    say "bench_prim_gpu: rc=$? ($(( $(date +%s) - T0 )) s)"
    cat "$OUT/prim-gpu.md"
fi

if has bench || has all || has seed004; then
    # SQLite at 50M rows would take most of a call (seconds per query):
    # it runs at 5M only
    for rows in ${GQP_BENCH_ROWS:-5000000 50000000}; do
        T0=$(date +%s)
        extra=""
        [ "$rows" -gt 10000000 ] && extra="--no-sqlite"
        PYTHONUNBUFFERED=1 python3 bench/seed004.py --rows "$rows" --build $B \
            --work /tmp/bench-work --device gpu,cpu,auto --threads "$(nproc)" $extra \
            > "$OUT/bench-$rows.md" 2> "$LOG/bench-$rows.log"
        say "bench $rows rows: rc=$? ($(( $(date +%s) - T0 )) s)"
        cat "$OUT/bench-$rows.md"
    done
fi
if has topk; then
    # ORDER BY ... LIMIT (bench/topk) at GQP_TOPK_ROWS (default 50M): the
    # radix select on the GPU and the CPU, then every row sorted
    # (GQP_TOPK=0) on both, DuckDB with all cores in each run
    rows=${GQP_TOPK_ROWS:-50000000}
    for mode in select full; do
        T0=$(date +%s)
        env=""
        [ $mode = full ] && env="GQP_TOPK=0"
        env $env PYTHONUNBUFFERED=1 python3 bench/seed004.py --rows "$rows" --build $B \
            --work /tmp/bench-work --device gpu,cpu --threads "$(nproc)" --no-sqlite \
            --queries bench/topk --name "topk-$mode" > "$OUT/topk-$mode.md" 2> "$LOG/topk-$mode.log"
        say "topk $mode $rows rows: rc=$? ($(( $(date +%s) - T0 )) s)"
        cat "$OUT/topk-$mode.md"
    done
fi
if has fixedcost; then
    # issue 12's fixed cost, node by node: seed 004's single-row queries
    # (5M rows) and SSB SF 1 Q1.1 / Q2.1 / Q3.1 / Q4.1 under --device gpu, each in one
    # process: three warm-up runs, then EXPLAIN ANALYZE twice (per-node
    # times, copies), into $OUT/fixedcost.txt
    T0=$(date +%s)
    D4=/tmp/fc-seed004
    [ -f $D4/gqp.yaml ] || $B/gqp gen test --rows 5000000 --out $D4 > "$LOG/gen-fc.log" 2>&1
    DS=/tmp/fc-ssb1
    [ -f $DS/gqp.yaml ] || $B/gqp gen ssb --sf 1 --out $DS >> "$LOG/gen-fc.log" 2>&1
    : > "$OUT/fixedcost.txt"
    fc_one() { # config, query file
        q=$(grep -v '^--' "$2" | tr '\n' ' ' | sed 's/;[[:space:]]*$//')
        printf '%s;\n%s;\n%s;\nEXPLAIN ANALYZE %s;\nEXPLAIN ANALYZE %s;\n' "$q" "$q" "$q" "$q" "$q" > /tmp/fc.sql
        echo "=== $2" >> "$OUT/fixedcost.txt"
        $B/gqp run -c "$1" --device gpu --mode line /tmp/fc.sql >> "$OUT/fixedcost.txt" 2>&1
    }
    for q in q11 q12 q13; do fc_one $D4/gqp.yaml tests/seed004/queries/$q.sql; done
    for q in q1.1 q2.1 q3.1 q4.1; do fc_one $DS/gqp.yaml tests/ssb/queries/$q.sql; done
    # A/B of the small-launch switches (GQP_FC_AB: settings, | separated),
    # bench_gqp median of 21 each, every setting in turn twice
    IFS='|' read -ra FCS <<< "${GQP_FC_AB:-GQP_MAP_INLINE=0|X=1|GQP_SORT_SMALL=1}"
    for round in 1 2; do
        for set in "${FCS[@]}"; do
            echo "=== bench round $round: $set" >> "$OUT/fixedcost.txt"
            env $set $B/bench_gqp -c $D4/gqp.yaml --device gpu --repeat 21 \
                tests/seed004/queries/q1[123].sql >> "$OUT/fixedcost.txt" 2>&1
            env $set $B/bench_gqp -c $DS/gqp.yaml --device gpu --repeat 21 \
                tests/ssb/queries/q*.sql >> "$OUT/fixedcost.txt" 2>&1
        done
    done
    say "fixedcost: $(grep -c '^=== ' "$OUT/fixedcost.txt") queries ($(( $(date +%s) - T0 )) s)"
    # the timelines' totals (launches, host waits) per EXPLAIN ANALYZE
    grep -a "^=== \|^GPU timeline\|^after the last node" "$OUT/fixedcost.txt" | grep -v "bench round" |
        tee -a "$SUM" > /dev/null
fi
if has placement || has placement-shipped; then
    if [ "${GQP_WITH_CTEST:-0}" = 1 ]; then # the whole suite first, on this GPU
        T0=$(date +%s)
        (cd $B && ctest -j8 --output-on-failure > "$LOG/ctest.log" 2>&1)
        say "ctest: rc=$? $(grep -a 'tests passed' "$LOG/ctest.log") ($(( $(date +%s) - T0 )) s)"
    fi
    # issue 4's sweep: sizes x selectivities x residency x shapes, forced cpu,
    # forced gpu and auto interleaved in one process per size and location
    # (GQP_PLACEMENT_ARGS="--sizes 1e3,1e4,1e5,1e6,1e7" if a call runs short).
    # placement: calibrate this machine first and sweep with that cost file
    # (returned as $OUT/cost-<gpu>.yaml); placement-shipped: the configs/ one
    if has placement; then
        T0=$(date +%s)
        G=h100
        nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && G=h200
        mkdir -p /tmp/cal
        $B/gqp calibrate --out /tmp/cal/cost-$G.yaml > "$LOG/calibrate.log" 2>&1
        say "calibrate: rc=$? ($(( $(date +%s) - T0 )) s)"
        cp /tmp/cal/cost-$G.yaml "$OUT/"
        export GQP_COST_DIR=/tmp/cal
    fi
    T0=$(date +%s)
    PYTHONUNBUFFERED=1 python3 bench/placement.py --build $B --work /tmp/placement \
        --threads "$(nproc)" --out /tmp/placement-out.md --png "$OUT/placement.png" \
        ${GQP_PLACEMENT_ARGS:-} > "$LOG/placement.log" 2>&1
    say "placement sweep: rc=$? ($(( $(date +%s) - T0 )) s)"
    cp /tmp/placement-out.md "$OUT/placement.md"
    cp /tmp/placement/bench-raw.txt "$LOG/" 2>/dev/null
    grep -A4 "^## Summary" "$OUT/placement.md" | tee -a "$SUM"
    cp /tmp/placement-out.json "$OUT/placement.json" 2>/dev/null
    tar czf "$OUT/explain.tgz" -C /tmp/placement $(cd /tmp/placement && ls -d explain-* 2>/dev/null)
fi

if has ssb || has bench || has all; then
    # SSB at SF 10 and 20, GPU vs DuckDB with all cores, floors (CPU twins
    # only at SF 1: at SF 20 they would take most of a call)
    T0=$(date +%s)
    # gpu: the plan auto-chooses per aggregation; gpu-sort: forced sort +
    # segmented reduce (the plan before the fused dense-aggregate); Crystal
    # (docs/gpu.md: cp -r ../shared/anchors/crystal .crystal, carried)
    CRYSTAL=()
    [ -f "$ROOT/.crystal/crystal_run.sh" ] &&
        CRYSTAL=(--crystal "$ROOT/.crystal" --crystal-timeout "${GQP_CRYSTAL_TIMEOUT:-900}")
    PYTHONUNBUFFERED=1 python3 bench/ssb.py ${GQP_SSB_SF:---sf 10 --sf 20} --build $B \
        --work /tmp/ssb-bench --device ${GQP_SSB_DEVICES:-gpu,gpu-sort} --threads "$(nproc)" \
        --png "$OUT/ssb.png" "${CRYSTAL[@]}" ${GQP_SSB_ARGS:-} \
        > "$OUT/ssb-bench.md" 2> "$LOG/ssb-bench.log"
    say "ssb bench: rc=$? ($(( $(date +%s) - T0 )) s)${CRYSTAL[0]:+, with Crystal}"
    cp /tmp/ssb-bench/crystal-sf*.log /tmp/ssb-bench/crystal-sf*-raw.txt "$LOG/" 2>/dev/null
    cat "$OUT/ssb-bench.md"
fi

if has tpch-check; then
    T0=$(date +%s)
    PYTHONUNBUFFERED=1 python3 tests/tpch/check.py $B/gqp /tmp/tpch-check \
        --sf ${GQP_TPCH_CHECK_SF:-1} --configs ${GQP_TPCH_CONFIGS:-gpu,auto,cpu,gpu-sort,gpu-dense,gpu-chunked} -j 4 \
        > "$OUT/tpch-check.txt" 2>&1
    say "tpch check SF ${GQP_TPCH_CHECK_SF:-1} vs the official answers: rc=$? $(tail -1 "$OUT/tpch-check.txt") ($(( $(date +%s) - T0 )) s)"
fi
if has tpch; then
    T0=$(date +%s)
    PYTHONUNBUFFERED=1 python3 bench/tpch.py ${GQP_TPCH_SF:---sf 10} --build $B \
        --work /tmp/tpch-bench --device ${GQP_TPCH_DEVICES:-gpu,auto} --threads "$(nproc)" \
        ${GQP_TPCH_ARGS:-} > "$OUT/tpch-bench.md" 2> "$LOG/tpch-bench.log"
    say "tpch bench: rc=$? ($(( $(date +%s) - T0 )) s)"
    # per-node EXPLAIN ANALYZE (JSON) of every query and device, into logs.tgz
    for d in /tmp/tpch-bench/tpch-sf*/explain; do
        [ -d "$d" ] && cp -r "$d" "$LOG/explain-$(basename "$(dirname "$d")")"
    done
    tail -5 "$LOG/tpch-bench.log" | tee -a "$SUM"
    cat "$OUT/tpch-bench.md"
fi

if has memlimit; then
    # issue 11: every query under memory_limit = a quarter of the bytes it
    # reads (bench/memlimit.py): answers against the unlimited run, time
    # against the PCIe floor. GQP_MEMLIMIT_SETS: ssb20 (SSB SF 20, generated
    # when missing), tpch10 (TPC-H SF 10, likewise) and/or seed004-N (seed
    # 004's table of N rows); GQP_MEMLIMIT_DEVICE: gpu, auto or both
    # (comma separated). GQP_MEMLIMIT_HOG=MIB: the out-of-memory probe
    # instead of a memory_limit: another process (../shared/tools/
    # gpu_hog.cu, carried in shared/tools/) holds all but MIB of the GPU
    HOG=()
    if [ -n "${GQP_MEMLIMIT_HOG:-}" ]; then
        nvcc -O2 -arch=sm_90 -o /tmp/gpu_hog shared/tools/gpu_hog.cu > "$LOG/hog-build.log" 2>&1 &&
            HOG=(--hog /tmp/gpu_hog --hog-free "$GQP_MEMLIMIT_HOG")
        say "gpu_hog build: ${HOG[0]:-FAILED (shared/tools/gpu_hog.cu carried?)}"
    fi
    for set in $(echo "${GQP_MEMLIMIT_SETS:-ssb20,tpch10}" | tr , ' '); do
        case $set in
        ssb*)
            D=/tmp/ssb-bench/ssb-sf${set#ssb}
            [ -f $D/gqp.yaml ] || $B/gqp gen ssb --sf ${set#ssb} --out $D > "$LOG/gen-$set.log" 2>&1
            CFG=$D/gqp.yaml Q=tests/ssb/queries ;;
        tpch*)
            D=/tmp/tpch-bench/tpch-sf${set#tpch}
            [ -f $D/gqp.yaml ] || $B/gqp gen tpch --sf ${set#tpch} --out $D > "$LOG/gen-$set.log" 2>&1
            CFG=$D/gqp.yaml Q=bench/tpch ;;
        seed004-*)
            # generated as CSV: imported once into a database folder (binary
            # columns), so that each gqp process does not parse it again
            D=/tmp/bench-work/$set
            [ -d $D/db ] || { $B/gqp gen test --rows ${set#seed004-} --out $D &&
                $B/gqp import -c $D/gqp.yaml --db $D/db; } > "$LOG/gen-$set.log" 2>&1
            CFG=$D/db Q=tests/seed004/queries ;;
        esac
        # GQP_MEMLIMIT_QUERIES: some of the set's query files, comma separated
        Q=${GQP_MEMLIMIT_QUERIES:-$Q}
        for dev in $(echo "${GQP_MEMLIMIT_DEVICE:-gpu}" | tr , ' '); do
            T0=$(date +%s)
            tag=$set-$dev${HOG[0]:+-hog}
            # gpu-noprefetch: --device gpu without the next chunk's copies
            # issued ahead (GQP_CHUNK_PREFETCH=0); gpu-peak, auto-peak: the
            # budget judging plans by their values' peak (GQP_BUDGET_PEAK=1);
            # for A/Bs in one call
            envp=()
            case $dev in
            gpu-noprefetch) dev=gpu; envp=(GQP_CHUNK_PREFETCH=0) ;;
            *-peak) dev=${dev%-peak}; envp=(GQP_BUDGET_PEAK=1) ;;
            esac
            # GQP_MEMLIMIT_TIMEOUT: seconds per set and device (the table
            # then holds the queries measured by then)
            env "${envp[@]}" PYTHONUNBUFFERED=1 timeout -s TERM ${GQP_MEMLIMIT_TIMEOUT:-0} python3 bench/memlimit.py --config $CFG --queries $Q --build $B \
                --fraction ${GQP_MEMLIMIT_FRACTION:-0.25} --device $dev ${GQP_MEMLIMIT_ARGS:-} \
                "${HOG[@]}" --threads "$(nproc)" --work /tmp/memlimit-$tag \
                > "$OUT/memlimit-$tag.md" 2> "$LOG/memlimit-$tag.log"
            say "memlimit $tag: rc=$? $(tail -1 "$OUT/memlimit-$tag.md") ($(( $(date +%s) - T0 )) s)"
            cp -r /tmp/memlimit-$tag/memlimit-explain "$LOG/explain-memlimit-$tag" 2>/dev/null
        done
    done
fi

if has davar; then
    # issue 12: the dense-aggregate kernel's variants on SSB SF GQP_DAVAR_SF
    # (default 20), one bench_gqp process per variant (warm-up + median of 9,
    # all 13 queries; GQP_DAVAR: one word per variant, its environment
    # settings joined by commas): by default the general kernel
    # (GQP_DA_LEAN=0), the lean one (the default), mode 1 without its
    # register cap (GQP_DA_MINB=0); each variant's
    # answers (gqp run --mode csv, md5) against the first's; the general
    # kernel again at the end for drift
    T0=$(date +%s)
    SF=${GQP_DAVAR_SF:-20}
    D=/tmp/ssb-bench/ssb-sf$SF
    [ -f $D/gqp.yaml ] || $B/gqp gen ssb --sf $SF --out $D > "$LOG/gen-davar.log" 2>&1
    for v in ${GQP_DAVAR:-GQP_DA_LEAN=0 GQP_DA_LEAN=1 GQP_DA_MINB=0 GQP_DA_LEAN=0}; do
        e=$(echo "$v" | tr , ' ')
        env $e $B/bench_gqp -c $D/gqp.yaml --device gpu --repeat 9 tests/ssb/queries/q*.sql \
            > "$LOG/davar-$v.txt" 2>&1
        h=""
        for q in tests/ssb/queries/q*.sql; do
            h="$h $(env $e $B/gqp run -c $D/gqp.yaml --device gpu --mode csv "$q" | md5sum | cut -c1-8)"
        done
        echo "$v$h" >> "$OUT/davar.txt"
        grep -a "wall_ms" "$LOG/davar-$v.txt" | awk -v v="$v" '{print v, $0}' >> "$OUT/davar.txt"
    done
    base=$(head -1 "$OUT/davar.txt" | cut -d' ' -f2-)
    say "davar SF $SF: answers equal to the first variant's: $(grep -c -F -- "$base" "$OUT/davar.txt") of $(grep -vc wall_ms "$OUT/davar.txt") ($(( $(date +%s) - T0 )) s)"
fi

if has tpchvar; then
    # A/B of settings in one call: per variant (a word of GQP_TPCHVAR, its
    # environment settings joined by commas, e.g. "GQP_AGGREGATE=sort
    # GQP_AGGREGATE=auto") the map twins' unit tests (test_prim_gpu
    # map*), the map/select rows of bench_prim_gpu, the 22
    # TPC-H queries at SF GQP_TPCHVAR_SF (default 1; data generated when
    # missing) under GQP_TPCHVAR_DEVICES (default gpu; bench_gqp, warm-up +
    # median of 5), and their answers' md5 against the first variant's
    T0=$(date +%s)
    SF=${GQP_TPCHVAR_SF:-1}
    D=/tmp/tpch-check/sf$SF
    [ -f $D/gqp.yaml ] || $B/gqp gen tpch --sf $SF --out $D > "$LOG/gen-tpchvar.log" 2>&1
    : > "$OUT/tpchvar.txt"
    for v in ${GQP_TPCHVAR:-GQP_AGGREGATE=auto}; do
        e=$(echo "$v" | tr , ' ')
        env $e $B/tests/test_prim_gpu --jobs 1 --filter 'prim_gpu/map*' > "$LOG/tpchvar-test-$v.log" 2>&1
        echo "$v test_prim_gpu map*: rc=$? $(grep -a Synthesis "$LOG/tpchvar-test-$v.log")" >> "$OUT/tpchvar.txt"
        env $e $B/bench_prim_gpu --n 67108864 --reps 20 > "$LOG/tpchvar-prim-$v.md" 2>&1
        grep -a "^| map\|^| select" "$LOG/tpchvar-prim-$v.md" | sed "s/^/$v /" >> "$OUT/tpchvar.txt"
        for dev in $(echo "${GQP_TPCHVAR_DEVICES:-gpu}" | tr , ' '); do
            env $e $B/bench_gqp -c $D/gqp.yaml --device $dev --repeat 5 bench/tpch/q*.sql \
                > "$LOG/tpchvar-$v-$dev.txt" 2>&1
            h=""
            for q in bench/tpch/q*.sql; do
                h="$h $(env $e $B/gqp run -c $D/gqp.yaml --device $dev --mode csv "$q" | md5sum | cut -c1-6)"
            done
            echo "$v $dev md5$h" >> "$OUT/tpchvar.txt"
            grep -a "wall_ms" "$LOG/tpchvar-$v-$dev.txt" | sed "s/^/$v $dev /" >> "$OUT/tpchvar.txt"
        done
    done
    base=$(grep -a md5 "$OUT/tpchvar.txt" | head -1 | cut -d' ' -f4-)
    say "tpchvar SF $SF: answers equal to the first variant's: $(grep -a md5 "$OUT/tpchvar.txt" | grep -c -F -- "$base") of $(grep -ac md5 "$OUT/tpchvar.txt") ($(( $(date +%s) - T0 )) s)"
fi

if has ncuprim; then
    # issue 12: Nsight Compute's counters for bench_prim_gpu's map kernel
    # (the first two launches: the twin's warm-up and first timed run)
    T0=$(date +%s)
    NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
    timeout 240 "$NCU" --clock-control none --kernel-name regex:${GQP_NCU_KERNEL:-map_kernel} \
        --launch-count 2 --section SpeedOfLight --section Occupancy --section LaunchStats \
        --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
        --section WarpStateStats --section SchedulerStats --section InstructionStats \
        $B/bench_prim_gpu --n 67108864 --reps 1 > "$OUT/ncu-prim.txt" 2>&1
    say "ncuprim: rc=$? $(grep -c 'Section: GPU Speed Of Light' "$OUT/ncu-prim.txt") kernels ($(( $(date +%s) - T0 )) s)"
fi

if has ncu; then
    # issue 12: Nsight Compute's counters (speed of light, occupancy, launch,
    # memory, warp stalls) for every GPU kernel of chosen SSB queries
    # (GQP_NCU_QUERIES, default q1.1 q2.1 q3.1 q4.1) at SF GQP_NCU_SF
    # (default 10), one bench_gqp process each (warm-up + 1 run), into
    # $OUT/ncu-<query>.txt; clocks left alone (--clock-control none)
    T0=$(date +%s)
    D=/tmp/ssb-bench/ssb-sf${GQP_NCU_SF:-10}
    [ -f $D/gqp.yaml ] || $B/gqp gen ssb --sf ${GQP_NCU_SF:-10} --out $D > "$LOG/gen-ncu.log" 2>&1
    NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
    for q in ${GQP_NCU_QUERIES:-q1.1 q2.1 q3.1 q4.1}; do
        timeout 150 "$NCU" --clock-control none --section SpeedOfLight --section Occupancy \
            --section LaunchStats --section MemoryWorkloadAnalysis --section WarpStateStats \
            --section SchedulerStats $B/bench_gqp -c $D/gqp.yaml --device gpu --repeat 1 \
            tests/ssb/queries/$q.sql > "$OUT/ncu-$q.txt" 2>&1
        say "ncu $q: rc=$? $(grep -c 'Section: GPU Speed Of Light' "$OUT/ncu-$q.txt") kernels"
    done
    say "ncu: $(( $(date +%s) - T0 )) s"
fi

[ -n "${MEMDEV_PID:-}" ] && wait "$MEMDEV_PID"
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$LOG"
echo "==== summary ===="
cat "$SUM"
