"""stdin_stream_test.py GQP_BINARY -- a non-terminal standard input runs
statement by statement as it arrives: `gqp run --mode csv -` and `gqp`
(the shell without a terminal) print a statement's result as soon as the
line holding its ';' has been written, while the rest of the input is not
written yet (the pipe stays open). Also: the shell without a terminal runs
dot commands, prints errors and goes on (exit status 1), `gqp run -` stops
at the first error, and a last statement without ';' runs at the end.

Prints one line per failed check; exits 1 if any failed.
"""
import os
import select
import subprocess
import sys
import time

GQP = os.path.abspath(sys.argv[1])
fails = 0
TIMEOUT = 20.0


def fail(msg, text=""):
    global fails
    fails += 1
    print("FAIL: " + msg)
    for line in text.splitlines()[-20:]:
        print("  | " + line)


def read_until(p, want, what):
    """Read p's stdout until it holds want (bytes); returns what was read.
    A timeout (the result did not come while stdin stayed open) fails."""
    got = b""
    deadline = time.time() + TIMEOUT
    fd = p.stdout.fileno()
    while want not in got:
        left = deadline - time.time()
        if left <= 0:
            fail("%s: %r not printed while stdin is still open" % (what, want),
                 got.decode("utf-8", "replace"))
            break
        r, _, _ = select.select([fd], [], [], left)
        if r:
            chunk = os.read(fd, 4096)
            if not chunk:
                fail("%s: output ended before %r" % (what, want), got.decode("utf-8", "replace"))
                break
            got += chunk
    return got


def session(argv, what):
    env = dict(os.environ)
    env.pop("GQP_CONFIG", None)
    p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env, cwd="/")
    p.stdin.write(b"CREATE TABLE t(a INTEGER);\nINSERT INTO t VALUES (1), (2);\n"
                  b"SELECT SUM(a) AS s\n  FROM t;\n")
    p.stdin.flush()
    read_until(p, b"s\n3\n", what + " first result")
    p.stdin.write(b"SELECT COUNT(*) AS n FROM t; SELECT 'x;y' AS q;\n")
    p.stdin.flush()
    read_until(p, b"n\n2\nq\nx;y\n", what + " second line")
    return p


# gqp run -
p = session([GQP, "run", "--device", "cpu", "--mode", "csv", "-"], "gqp run -")
p.stdin.write(b"SELECT a FROM t WHERE a > 1")  # no ';': runs at the end
p.stdin.close()
out = p.stdout.read().decode()
err = p.stderr.read().decode()
if p.wait(TIMEOUT) != 0 or out != "a\n2\n":
    fail("gqp run -: last statement without ';' (status %d)" % p.returncode, out + err)

# gqp (no terminal): dot commands, errors go on, exit status 1
p = subprocess.Popen([GQP, "--device", "cpu"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, cwd="/")
p.stdin.write(b".mode csv\nSELECT 1 AS one;\n")
p.stdin.flush()
read_until(p, b"one\n1\n", "gqp without a terminal, after .mode csv")
p.stdin.write(b"-- a comment line alone;\nSELECT 'it''s;' AS q /* ; */\n-- ;\n;\n")
p.stdin.flush()
read_until(p, b"q\nit's;\n", "quotes and comments holding ';'")
p.stdin.write(b"SELECT nosuch;\nSELECT 2 AS two;\n.mode json\nSELECT 3 AS three;\n")
p.stdin.close()
out = p.stdout.read().decode()
err = p.stderr.read().decode()
rc = p.wait(TIMEOUT)
if out != 'two\n2\n[{"three":3}]\n' or "Binder Error" not in err or rc != 1:
    fail("gqp without a terminal: error then more statements (status %d)" % rc, out + err)

# gqp run - stops at the first error
p = subprocess.run([GQP, "run", "--mode", "csv", "-"], input=b"SELECT nosuch;\nSELECT 2 AS two;\n",
                   capture_output=True, timeout=TIMEOUT)
if p.returncode != 1 or p.stdout != b"" or b"Binder Error" not in p.stderr:
    fail("gqp run -: did not stop at the first error", (p.stdout + p.stderr).decode())

print("stdin_stream_test: %d failed checks" % fails)
sys.exit(1 if fails else 0)
