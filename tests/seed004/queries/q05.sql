-- Seed 004, Appendix A, query 5.
SELECT id, normali5, normali20 FROM test WHERE (normali20 + 40) > (uniformi - 10);
