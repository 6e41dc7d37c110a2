-- the 100 smallest of a filtered expression
SELECT id, normali20 * 3 - uniformi AS v FROM test WHERE normali5 > 0 ORDER BY v, id LIMIT 100;
