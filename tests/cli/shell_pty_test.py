"""shell_pty_test.py GQP_BINARY WORKDIR HAVE_READLINE -- the interactive
shell driven as a person drives it, under a pseudo-terminal (Python's pty
module): `gqp DB` on a small generated table (`gqp gen test`), a multi-line
SELECT, a ';' inside a string that does not end the statement, `.mode csv`,
`.timer on`, an error that the shell survives, Ctrl-C dropping a half-typed
statement, `.explain on`, `.read`, `.tables`, `.schema`, `.import`, `.help`,
an unknown dot command, `.quit`; with readline (HAVE_READLINE=1), history
recall with Ctrl-P and the history file ~/.gqp_history. Answers come from
sqlite3 (Python's sqlite3 module on the same CSV).

`.tables` / `.schema` need SHOW TABLES / DESCRIBE, `.import` needs
read_csv(): where this build lacks them (checked with `gqp run` first) the
shell must print the engine's error and go on, and that is what is checked.

Prints one line per failed check; exits 1 if any failed.
"""
import csv
import os
import pty
import re
import select
import signal
import sqlite3
import subprocess
import sys
import time

GQP, WORK, HAVE_READLINE = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
os.makedirs(WORK, exist_ok=True)
fails = 0
TIMEOUT = 20.0


def fail(msg, text=""):
    global fails
    fails += 1
    print("FAIL: " + msg)
    for line in text.splitlines()[-25:]:
        print("  | " + line)


# ---- data: gqp gen test, and the same rows in sqlite3 ----
data = os.path.join(WORK, "gen")
subprocess.run([GQP, "gen", "test", "--rows", "200", "--out", data, "--seed", "5"],
               check=True, capture_output=True)
cfg = os.path.join(data, "gqp.yaml")
ref = sqlite3.connect(":memory:")
with open(os.path.join(data, "test.csv")) as f:
    rows = list(csv.reader(f))
ref.execute("CREATE TABLE test(%s)" % ", ".join(rows[0]))
ref.executemany("INSERT INTO test VALUES (%s)" % ",".join("?" * len(rows[0])),
                [[float(v) if "." in v else int(v) for v in r] for r in rows[1:]])
n_ref, lo_ref = ref.execute("SELECT COUNT(*), MIN(id) FROM test").fetchone()
csv_ref = "".join("%d,%d\r\n" % r for r in ref.execute(
    "SELECT id, uniformi FROM test WHERE id < %d ORDER BY id" % (lo_ref + 3)))


def works(sql):
    """1 when `gqp run` on the same database runs sql without an error."""
    p = subprocess.run([GQP, "run", "-c", cfg, "--device", "cpu", "-e", sql],
                       capture_output=True, text=True)
    return p.returncode == 0


have_show = works("SHOW TABLES")
have_describe = works("DESCRIBE test")
small_csv = os.path.join(WORK, "small.csv")
with open(small_csv, "w") as f:
    f.write("k,v\n1,one\n2,two\n3,three\n")
have_read_csv = works("SELECT COUNT(*) FROM read_csv('%s')" % small_csv)
script = os.path.join(WORK, "script.sql")
with open(script, "w") as f:
    f.write(".mode csv\nSELECT 40 +\n  2 AS answer;\n")

# ---- the session ----
home = os.path.join(WORK, "home")
os.makedirs(home, exist_ok=True)
hist = os.path.join(home, ".gqp_history")
if os.path.exists(hist):
    os.remove(hist)
env = dict(os.environ, HOME=home, TERM="dumb", COLUMNS="100", LINES="40")
env.pop("GQP_HISTORY", None)
env.pop("GQP_CONFIG", None)
pid, fd = pty.fork()
if pid == 0:
    os.chdir(WORK)
    os.execvpe(GQP, [GQP, "--device", "cpu", cfg], env)

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[=>]|\r")
out = ""  # everything the terminal showed, escapes and CRs removed
raw = b""


def read_until(pattern, what):
    """Read the terminal until the text after the last mark matches the
    regex; a timeout is a failed check. Returns the text read since mark."""
    global out, raw
    deadline = time.time() + TIMEOUT
    while True:
        text = out[mark:]
        if re.search(pattern, text):
            return text
        left = deadline - time.time()
        if left <= 0:
            fail("timeout waiting for %s (/%s/)" % (what, pattern), text)
            return text
        r, _, _ = select.select([fd], [], [], left)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                chunk = b""
            if not chunk:
                fail("gqp ended while waiting for %s" % what, out[mark:])
                sys.exit(1)
            raw += chunk
            out = ANSI.sub("", raw.decode("utf-8", "replace"))


def send(text, until=r"gqp> $", what=None):
    """Type text (as keystrokes), wait for the pattern (default: the next
    primary prompt) and return what the terminal showed meanwhile."""
    global mark
    mark = len(out)
    os.write(fd, text.encode())
    return read_until(until, what or repr(text))


mark = 0
banner = read_until(r"gqp> $", "the first prompt")
if 'Enter ".help"' not in banner or "Connected to" not in banner:
    fail("banner lacks the .help hint or the database", banner)

# a multi-line SELECT: the continuation prompt, then the box
t = send("SELECT COUNT(*) AS n,\n", until=r"\.\.\.> $", what="continuation prompt")
t = send("  MIN(id) AS lo\n", until=r"\.\.\.> $", what="continuation prompt")
t = send("FROM test;\n")
if not re.search(r"│\s+%d\s+│\s+%d\s+│" % (n_ref, lo_ref), t):
    fail("multi-line SELECT: no row with n=%d, lo=%d" % (n_ref, lo_ref), t)

# a ';' inside a string or a comment does not end the statement
t = send("SELECT 'a;b' AS s -- c;\n", until=r"\.\.\.> $", what="continuation after 'a;b'")
t = send(";\n")
if not re.search(r"│ a;b +│", t):
    fail("';' inside a string: wrong result", t)

# .mode csv
t = send(".mode csv\n")
t = send("SELECT id, uniformi FROM test WHERE id < %d ORDER BY id;\n" % (lo_ref + 3))
got = t.split("\n", 1)[1] if "\n" in t else t
got = got.rsplit("gqp> ", 1)[0].replace("\n", "\r\n")
if got != "id,uniformi\r\n" + csv_ref:
    fail(".mode csv: rows differ from sqlite3's\n%r\n%r" % (got, "id,uniformi\r\n" + csv_ref), t)

# .timer on
t = send(".timer on\n")
t = send("SELECT 1 AS one;\n")
if not re.search(r"Run Time: [0-9.]+ ms", t):
    fail(".timer on: no Run Time line", t)
send(".timer off\n")

# an error is printed as gqp run prints it, and the shell goes on
t = send("SELECT nosuchcol FROM test;\n")
if "Binder Error" not in t or "nosuchcol" not in t:
    fail("error statement: no Binder Error", t)
t = send("SELECT 2 AS two;\n")
if "two\n2\n" not in t:
    fail("after an error the shell does not go on", t)

# Ctrl-C drops a half-typed statement
t = send("SELECT 99\n", until=r"\.\.\.> $", what="continuation")
mark = len(out)
os.write(fd, b"\x03")
read_until(r"gqp> $", "a fresh prompt after Ctrl-C")
t = send("SELECT 7 AS seven;\n")
if "seven\n7\n" not in t or "99" in t:
    fail("Ctrl-C did not drop the half-typed statement", t)

# history: Ctrl-P recalls the last statement
if HAVE_READLINE:
    t = send("\x10\n")
    if "seven\n7\n" not in t:
        fail("Ctrl-P did not recall the last statement", t)

# .explain on prints the plan before the result
t = send(".explain on\n")
t = send("SELECT COUNT(*) AS c FROM test WHERE id > 3;\n")
if not re.search(r"(?i)scan|filter|reduce|aggregate", t) or "c\n%d\n" % (
        n_ref - ref.execute("SELECT COUNT(*) FROM test WHERE id <= 3").fetchone()[0]) not in t:
    fail(".explain on: no plan or wrong count", t)
send(".explain off\n")

# .read FILE runs dot commands and multi-line SQL
t = send(".read %s\n" % script)
if "answer\n42\n" not in t:
    fail(".read: script did not run", t)

# .tables and .schema (SHOW TABLES / DESCRIBE: helper h2)
t = send(".tables\n")
if have_show:
    if not re.search(r"(?m)^test\s*$", t):
        fail(".tables: no 'test'", t)
elif "Error" not in t:
    fail(".tables without SHOW TABLES: no error printed", t)
t = send(".schema test\n")
if have_describe:
    if not re.search(r"CREATE TABLE test \(id [A-Z]+", t):
        fail(".schema test: no CREATE TABLE", t)
elif "Error" not in t:
    fail(".schema without DESCRIBE: no error printed", t)

# .import FILE TABLE twice: created, then appended (read_csv: helper h3)
t = send(".import %s imported\n" % small_csv)
t2 = send(".import %s imported\n" % small_csv)
t3 = send("SELECT COUNT(*) AS n FROM imported;\n")
if have_read_csv:
    if "n\n6\n" not in t3:
        fail(".import twice: expected 6 rows", t + t2 + t3)
elif "Error" not in t:
    fail(".import without read_csv: no error printed", t)

# .help, an unknown dot command, .mode with a bad name
t = send(".help\n")
if ".import FILE TABLE" not in t or ".schema" not in t:
    fail(".help: incomplete", t)
t = send(".frobnicate\n")
if "unknown command" not in t:
    fail(".frobnicate: no error", t)
t = send(".mode xml\n")
if "Error" not in t:
    fail(".mode xml: no error", t)

# .quit ends the process with status 0
mark = len(out)
os.write(fd, b".quit\n")
status = None
deadline = time.time() + TIMEOUT
while time.time() < deadline:
    try:
        r, _, _ = select.select([fd], [], [], 0.2)
        if r:
            os.read(fd, 4096)
    except OSError:
        pass
    wpid, st = os.waitpid(pid, os.WNOHANG)
    if wpid == pid:
        status = st
        break
if status is None:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    fail(".quit: gqp did not exit")
elif not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
    fail(".quit: exit status %r" % status)

if HAVE_READLINE:
    text = open(hist).read() if os.path.exists(hist) else ""
    if "SELECT 2 AS two;" not in text or "SELECT COUNT(*) AS n," not in text:
        fail("history file ~/.gqp_history lacks the statements typed", text)

print("shell_pty_test: %d failed checks" % fails)
sys.exit(1 if fails else 0)
