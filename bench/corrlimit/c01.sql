-- each customer's second-latest order's price (a scalar subquery with OFFSET per outer row)
SELECT c_custkey, (SELECT o_totalprice FROM orders WHERE o_custkey = c_custkey ORDER BY o_orderdate DESC, o_orderkey LIMIT 1 OFFSET 1) AS p FROM customer ORDER BY c_custkey LIMIT 10
