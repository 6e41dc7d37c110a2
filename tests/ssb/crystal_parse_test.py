#!/usr/bin/env python3
"""Self-test of bench/ssb.py's reading of crystal_run.sh's raw log (run by
ctest; stdlib Python only, no GPU): per `=== qNN` block the median of
"time_query" over trials 2..N, q41nocopy standing for Q4.1, failed binaries
left out, Crystal's names mapped onto tests/ssb/queries' file names."""
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import ssb  # noqa: E402


def block(name, times, rc=0, extra=""):
    """One binary's part of a raw log, shaped like Crystal's output."""
    out = ["=== " + name]
    for t in times:
        out.append('{"num_queries":1,"time_query":%s}' % t)
    out.append(extra + "rc=%d" % rc)
    return "\n".join(out) + "\n"


class ParseCrystal(unittest.TestCase):
    def test_median_skips_the_first_trial(self):
        # warm-up 9.0 dropped: median of 1.0, 3.0, 2.0 is 2.0 (not 2.5)
        got = ssb.parse_crystal(block("q11", [9.0, 1.0, 3.0, 2.0]))
        self.assertEqual(got, {"q1.1": 2.0})

    def test_even_trials_and_exponents(self):
        got = ssb.parse_crystal(block("q21", ["5", "1.5e-1", "2.5E-1"]))
        self.assertAlmostEqual(got["q2.1"], 0.2)

    def test_single_trial_is_kept(self):
        self.assertEqual(ssb.parse_crystal(block("q32", [0.75])), {"q3.2": 0.75})

    def test_q41_is_nocopy(self):
        text = block("q41", [50.0, 40.0, 41.0]) + block("q41nocopy", [9.0, 2.6, 2.4, 2.8])
        self.assertEqual(ssb.parse_crystal(text), {"q4.1": 2.6})
        # the order of the blocks does not matter
        text = block("q41nocopy", [9.0, 2.6]) + block("q41", [50.0, 40.0])
        self.assertEqual(ssb.parse_crystal(text), {"q4.1": 2.6})

    def test_failed_binaries_are_left_out(self):
        text = (block("q12", [], rc=127, extra="/tmp/crystal/bin/q12: No such file\n")
                + block("q13", [], rc=1, extra="CUDA error: no CUDA-capable device\n")
                + block("q43", [1.0, 1.5, 1.6]))
        self.assertEqual(ssb.parse_crystal(text), {"q4.3": 1.55})
        self.assertEqual(ssb.parse_crystal(""), {})
        self.assertEqual(ssb.parse_crystal("convert failed\n"), {})

    def test_every_crystal_binary_names_a_gqp_query(self):
        # crystal_run.sh's binaries, as its QUERIES default lists them
        bins = "q11 q12 q13 q21 q22 q23 q31 q32 q33 q34 q41 q41nocopy q42 q43".split()
        text = "".join(block(b, [1.0, 2.0]) for b in bins)
        got = ssb.parse_crystal(text)
        self.assertEqual(sorted(got), sorted(name for name, _, _ in ssb.queries()))
        self.assertIsNone(ssb.crystal_name("q41"))
        self.assertEqual(ssb.crystal_name("q34"), "q3.4")


class Report(unittest.TestCase):
    def table(self, cr):
        class Args:
            threads = 1
            crystal = ".crystal"
            crystal_trials = 21
        qs = ssb.queries()
        g = {"gpu": {name: (1, 2.0) for name, _, _ in qs}}
        text, chart = ssb.report(Args, 1.0, 6000000, ["gpu"], g, None, None, qs, cr=cr)
        return text, chart

    def test_columns_and_geomean(self):
        text, chart = self.table(({"q1.1": 0.5, "q4.3": 1.0}, None))
        lines = text.splitlines()
        self.assertIn("crystal ms | gqp-gpu/crystal |", lines[6])
        q11 = [l for l in lines if l.startswith("| q1.1 |")][0]
        self.assertTrue(q11.endswith(" 0.50 | 4.00× |"), q11)
        q12 = [l for l in lines if l.startswith("| q1.2 |")][0]
        self.assertTrue(q12.endswith(" n/a | n/a |"), q12)
        gm = [l for l in lines if l.startswith("| geomean |")][0]
        self.assertTrue(gm.endswith(" 0.71 | 2.83× |"), gm)
        self.assertIn("not comparable", text)
        self.assertNotIn("Crystal n/a", text)
        self.assertEqual(chart[0][4], 0.5)

    def test_failure_reads_na(self):
        text, _ = self.table(({}, "no query printed a time"))
        gm = [l for l in text.splitlines() if l.startswith("| geomean |")][0]
        self.assertTrue(gm.endswith(" n/a | n/a |"), gm)
        self.assertIn("Crystal n/a: no query printed a time.", text)

    def test_no_crystal_no_columns(self):
        text, _ = self.table(None)
        self.assertNotIn("crystal", text.lower())


if __name__ == "__main__":
    unittest.main()
