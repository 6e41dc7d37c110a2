-- Seed 004, Appendix A, query 4.
SELECT id, uniformf, normalf5 FROM test WHERE uniformf > -60 AND normalf5 < 5;
