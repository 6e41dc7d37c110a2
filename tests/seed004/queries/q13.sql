-- Seed 004, Appendix A, query 13.
SELECT MAX(normali5), MIN(normali5) FROM test;
