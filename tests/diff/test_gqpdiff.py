#!/usr/bin/env python3
"""Self-test of gqpdiff.py's result comparison (run by ctest)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gqpdiff  # noqa: E402


class RowsEq(unittest.TestCase):
    def test_unordered_big_integers_compare_exactly(self):
        # both round to the same float: the order-insensitive sort must
        # still pair them exactly (was reported as `wrong`)
        a = [(9223372036854775807,), (9223372036854775806,)]
        b = [(9223372036854775806,), (9223372036854775807,)]
        self.assertTrue(gqpdiff.rows_eq(a, b, False))
        self.assertFalse(gqpdiff.rows_eq(a, b, True))
        self.assertFalse(gqpdiff.rows_eq(a, [(9223372036854775806,)] * 2, False))

    def test_mixed_values(self):
        self.assertTrue(gqpdiff.rows_eq([(1.5, None), (None, "a"), ("a", 2)],
                                        [("a", 2.0), (1.5, None), (None, "a")], False))
        self.assertTrue(gqpdiff.rows_eq([(2**62,), (3,)], [(3.0,), (float(2**62),)], False))


if __name__ == "__main__":
    unittest.main()
