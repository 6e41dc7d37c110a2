-- Seed 004, Appendix A, query 6.
SELECT id, normalf5, normalf20 FROM test WHERE (normalf20 + 40) > (uniformf - 10);
