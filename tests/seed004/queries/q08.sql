-- Seed 004, Appendix A, query 8.
SELECT id, normalf5, normalf20 FROM test WHERE normalf5 * normalf20 BETWEEN -5 AND 5;
