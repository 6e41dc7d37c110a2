-- the k-th value (here the median row) without sorting every row
SELECT id, normalf20 FROM test ORDER BY normalf20, id LIMIT 1 OFFSET 2500000;
