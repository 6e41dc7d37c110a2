-- the 10 largest values of a REAL column
SELECT id, uniformf FROM test ORDER BY uniformf DESC LIMIT 10;
