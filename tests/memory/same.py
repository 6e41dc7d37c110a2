"""same.py EXPECTED GOT -- exit 0 if two `gqp run --mode csv` outputs hold the
same header and the same rows as multisets (numbers equal within 1e-6
relative, so GPU and CPU sums in another order agree), else 1 with the
first difference."""
import sys


def rows(path):
    with open(path) as f:
        lines = [l.rstrip("\r\n") for l in f]
    head, body = (lines[0], lines[1:]) if lines else ("", [])
    out = []
    for l in body:
        row = []
        for v in l.split(","):
            try:
                row.append((0, float(v)))
            except ValueError:
                row.append((1, v))
        out.append(row)
    return head, sorted(out, key=lambda r: [(k, str(v)) if k else (k, v) for k, v in r])


def close(a, b):
    if a[0] != b[0]:
        return False
    if a[0]:
        return a[1] == b[1]
    return abs(a[1] - b[1]) <= 1e-6 * max(1.0, abs(a[1]), abs(b[1]))


eh, exp = rows(sys.argv[1])
gh, got = rows(sys.argv[2])
if eh != gh:
    sys.exit("header differs: %r vs %r" % (eh, gh))
if len(exp) != len(got):
    sys.exit("%d rows expected, %d got" % (len(exp), len(got)))
for i, (e, g) in enumerate(zip(exp, got)):
    if len(e) != len(g) or not all(close(x, y) for x, y in zip(e, g)):
        sys.exit("row %d differs: %r vs %r" % (i, e, g))
