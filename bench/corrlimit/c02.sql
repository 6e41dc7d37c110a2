-- customers whose three latest orders include an urgent one (IN over a LIMIT per outer row)
SELECT COUNT(*) FROM customer WHERE '1-URGENT' IN (SELECT o_orderpriority FROM orders WHERE o_custkey = c_custkey ORDER BY o_orderdate DESC, o_orderkey LIMIT 3)
