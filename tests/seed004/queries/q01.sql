-- Seed 004, Appendix A, query 1.
SELECT id, uniformi, normali5 FROM test WHERE uniformi > 60 AND normali5 < 0;
