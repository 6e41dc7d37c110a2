-- Seed 004, Appendix A, query 11.
SELECT SUM(normalf20) FROM test;
