-- a page of a three-key order whose first key has many ties
SELECT id, uniformi, normali5 FROM test ORDER BY uniformi, normali5 DESC, id LIMIT 100 OFFSET 1000;
