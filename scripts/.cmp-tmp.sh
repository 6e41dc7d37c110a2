set -u
# A/B on one machine: HEAD (build-gpu, with the SSB + Crystal bench) vs .oldrev (the commit before the vector loads)
GQP_SSB_SF="--sf 20" GQP_SSB_DEVICES=gpu GQP_CRYSTAL_TIMEOUT=300 bash scripts/gpu-check.sh ssb 2>&1 | grep -E "build|ssb bench|^\| q|geomean"
PFX=/tmp/gqp-deps
export LD_LIBRARY_PATH=$PFX/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}
(cd .oldrev && cmake -S . -B b -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 -DCMAKE_PREFIX_PATH=$PFX/usr -DCMAKE_LIBRARY_PATH=$PFX/usr/lib/x86_64-linux-gnu > /tmp/oldb.log 2>&1 && cmake --build b -j16 --target bench_gqp gqp >> /tmp/oldb.log 2>&1) || { tail -20 /tmp/oldb.log; exit 1; }
D=/tmp/ssb-bench/ssb-sf20
echo "SELECT lo_discount, COUNT(*), SUM(lo_revenue), SUM(lo_quantity), MIN(lo_tax) FROM lineorder GROUP BY lo_discount ORDER BY 1;" > /tmp/qagg11.sql
echo "SELECT lo_orderpriority, COUNT(*), SUM(lo_revenue), SUM(lo_quantity), MIN(lo_discount), SUM(lo_extendedprice) FROM lineorder GROUP BY 1 ORDER BY 1;" > /tmp/qagg5.sql
echo "SELECT lo_quantity, COUNT(*), SUM(lo_revenue) FROM lineorder GROUP BY 1 ORDER BY 1;" > /tmp/qagg50.sql
Q="$(ls tests/ssb/queries/*.sql) /tmp/qagg11.sql /tmp/qagg5.sql /tmp/qagg50.sql"
for r in 1 2; do
  echo "== new $r"; build-gpu/bench_gqp -c $D/gqp.yaml --device gpu --repeat 9 $Q | grep -o "^\S*sql rows=[0-9]* exec_ms=[0-9.]*" | sed 's/^.*\///' | paste -sd' '
  echo "== old $r"; .oldrev/b/bench_gqp -c $D/gqp.yaml --device gpu --repeat 9 $Q | grep -o "^\S*sql rows=[0-9]* exec_ms=[0-9.]*" | sed 's/^.*\///' | paste -sd' '
done
for q in $Q; do a=$(build-gpu/gqp run -c $D/gqp.yaml --device gpu --mode csv $q | md5sum); b=$(build-gpu/gqp run -c $D/gqp.yaml --device cpu --mode csv $q | md5sum); [ "$a" = "$b" ] || echo "DIFF $q"; done; echo answers checked
