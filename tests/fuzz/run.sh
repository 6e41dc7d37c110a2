#!/bin/sh
# run.sh [SECONDS_EACH] [HARNESS...] -- build the libFuzzer harnesses
# (build-fuzz/, clang, ASan + UBSan, CUDA off) and run each for SECONDS_EACH
# seconds (default 60) on its corpus: the seeds from tests/ (make_seeds.py)
# plus what earlier runs found (build-fuzz/corpus/<harness>, kept between
# runs). Harnesses: fuzz_sql fuzz_load fuzz_config (default: all).
#
# First every input in tests/fuzz/regress/<harness>/ (past findings, kept
# as regression inputs) must run clean. A finding (crash, sanitizer report, leak, timeout > 10 s, > 2 GiB) is
# written to build-fuzz/artifacts/<harness>/ and minimized there
# (<file>.min); the script prints each with its reproduction command and
# exits 1. Exit 0 only when every harness ran its time without a finding.
# Environment: CC (default clang-14 or clang), FUZZ_JOBS (parallel fuzzing
# processes per harness, default 1), FUZZ_BUILD (build folder).
set -eu
cd "$(dirname "$0")/../.."
SECS=${1:-60}
[ $# -gt 0 ] && shift
HARNESSES=${*:-fuzz_sql fuzz_load fuzz_config}
B=${FUZZ_BUILD:-build-fuzz}
./scripts/install-deps.sh --clang
if [ -z "${CC:-}" ]; then
    if command -v clang-14 >/dev/null 2>&1; then CC=clang-14; else CC=clang; fi
fi
JOBS=$(nproc 2>/dev/null || echo 2)

mkdir -p "$B"
cmake -S . -B "$B" -DCMAKE_C_COMPILER="$CC" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DGQP_FUZZ=ON -DGQP_WITH_CUDA=OFF -DGQP_BUILD_TESTS=OFF >"$B/configure.log" 2>&1 ||
    { cat "$B/configure.log"; exit 1; }
# shellcheck disable=SC2086
cmake --build "$B" -j"$JOBS" --target $HARNESSES >/dev/null
rm -rf "$B/seeds"
python3 tests/fuzz/make_seeds.py "$B/seeds"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
total=0
for h in $HARNESSES; do
    corpus="$B/corpus/$h"
    art="$B/artifacts/$h"
    mkdir -p "$corpus" "$art"
    dict=""
    [ "$h" = fuzz_sql ] && dict="-dict=tests/fuzz/sql.dict"
    log="$B/$h.log"
    before=$(ls "$art" | grep -c -E '^(crash|leak|timeout|oom)-[0-9a-f]+$' || true)
    # first the inputs that once failed (tests/fuzz/regress/<harness>/):
    # each must now run clean, whatever the fuzzing finds
    for f in tests/fuzz/regress/"$h"/*; do
        [ -f "$f" ] || continue
        if ! "$B/tests/fuzz/$h" -timeout=10 -rss_limit_mb=2048 "$f" >"$B/regress.out" 2>&1; then
            sig=$(grep -m1 -E 'runtime error|ERROR: AddressSanitizer|ERROR: LeakSanitizer|ERROR: libFuzzer' \
                "$B/regress.out" | sed -e 's/^==[0-9]*==//' -e 's/ on address.*//' | cut -c1-160)
            echo "  REGRESSION $f fails: $sig"
            echo "    input: $(head -c 300 "$f" | cat -v | tr "\n" " ")"
            status=1
        fi
    done
    echo "fuzz: $h for ${SECS}s (log $log)"
    # -fork keeps fuzzing after a finding; every finding lands in $art
    # shellcheck disable=SC2086
    "$B/tests/fuzz/$h" $dict -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 \
        -max_len=4096 -print_final_stats=1 -artifact_prefix="$art/" \
        -fork="${FUZZ_JOBS:-1}" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 \
        "$corpus" "$B/seeds/$h" >"$log" 2>&1 || true
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{s+=$2} END {print s+0}')
    if [ "$runs" -eq 0 ]; then
        runs=$(grep -Eo 'exec/s|#[0-9]+' "$log" | grep '^#' | tr -d '#' | sort -n | tail -1)
    fi
    total=$((total + ${runs:-0}))
    # group the findings by where they fail (first sanitizer line / first
    # gqp frame); minimize one input per group (at most 20 s each)
    : >"$B/$h.findings"
    for f in "$art"/crash-* "$art"/leak-* "$art"/timeout-* "$art"/oom-*; do
        [ -f "$f" ] || continue
        case "$f" in *.min | *.out) continue ;; esac
        [ -f "$f.out" ] || timeout 60 "$B/tests/fuzz/$h" -timeout=10 -rss_limit_mb=2048 "$f" >"$f.out" 2>&1 || true
        sig=$(grep -m1 -E 'runtime error|ERROR: AddressSanitizer|ERROR: LeakSanitizer|ERROR: libFuzzer' "$f.out" |
            sed -e 's/^==[0-9]*==//' -e 's/ on address.*//' -e 's/0x[0-9a-f]*//g' | cut -c1-160)
        frame=$(grep -m1 -E '#[0-9]+ .* in [a-z_]+ .*/(sqlfront|catalog|planner|operators|primitives|cost|executor|libgqp)/' "$f.out" |
            sed -e 's/.* in //' -e 's|/.*/||' | cut -c1-80)
        printf '%s\t%s | %s\n' "$f" "${sig:-no report on re-run (flaky or timeout)}" "$frame" >>"$B/$h.findings"
    done
    cut -f2 "$B/$h.findings" | sort | uniq -c | sort -rn >"$B/$h.groups"
    nf=$(wc -l <"$B/$h.findings")
    echo "fuzz: $h: ${runs:-?} inputs, $((nf - before)) new findings ($nf kept in $art), $(wc -l <"$B/$h.groups") distinct"
    while IFS= read -r line; do
        n=$(echo "$line" | awk '{print $1}')
        sig=$(echo "$line" | sed 's/^ *[0-9]* //')
        f=$(awk -F'\t' -v s="$sig" '$2 == s {print $1; exit}' "$B/$h.findings")
        if [ ! -f "$f.min" ]; then
            "$B/tests/fuzz/$h" -minimize_crash=1 -max_total_time=20 -exact_artifact_path="$f.min" \
                "$f" >/dev/null 2>&1 || true
            [ -f "$f.min" ] || cp "$f" "$f.min"
        fi
        case "$sig" in
        "no report on re-run"*)
            echo "  not reproducible x$n (fork-mode artifact, not counted): $f"
            continue
            ;;
        esac
        echo "  FINDING x$n: $sig"
            echo "    input: $(head -c 300 "$f.min" | cat -v | tr "\n" " ")"
        echo "    reproduce: $B/tests/fuzz/$h $f.min"
        status=1
    done <"$B/$h.groups"
done
echo "fuzz: $total inputs in all"
exit $status
