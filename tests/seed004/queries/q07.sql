-- Seed 004, Appendix A, query 7.
SELECT id, normali5, normali20 FROM test WHERE normali5 * normali20 BETWEEN -5 AND 5;
