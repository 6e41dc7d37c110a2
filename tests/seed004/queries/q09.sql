-- Seed 004, Appendix A, query 9.
SELECT id, uniformi, normali5, normali20 FROM test WHERE NOT uniformi OR NOT normali5 OR NOT normali20;
