-- Seed 004, Appendix A, query 12.
SELECT AVG(uniformi) FROM test WHERE uniformi > 0;
