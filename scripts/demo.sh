#!/bin/sh
# demo.sh [ROWS] -- from a fresh checkout: install dependencies, build, write
# seed 004's table with ROWS rows (default 1000000) into demo/, run a query
# on it and print the query's placed primitive DAG (gqp explain).
set -eu
cd "$(dirname "$0")/.."
ROWS=${1:-1000000}
./scripts/install-deps.sh
./scripts/build.sh Release
./build/gqp gen test --rows "$ROWS" --out demo
Q="SELECT COUNT(*) AS n, AVG(uniformi) AS avg_u, MIN(normalf5) AS min_f5, MAX(normalf5) AS max_f5
FROM test WHERE uniformi > 60 AND normali5 < 0"
echo
echo "== gqp run -c demo/gqp.yaml --timer -e \"$Q\""
./build/gqp run -c demo/gqp.yaml --timer -e "$Q"
echo
echo "== gqp explain -c demo/gqp.yaml --analyze -e \"$Q\""
./build/gqp explain -c demo/gqp.yaml --analyze -e "$Q"
