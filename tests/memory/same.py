"""same.py EXPECTED GOT -- exit 0 if two `gqp run --mode csv` outputs hold the
same lines as multisets (headers included; numbers equal within 1e-6
relative, so GPU and CPU sums in another order agree), else 1 with the
first difference."""
import sys


def rows(path):
    with open(path) as f:
        lines = [l.rstrip("\r\n") for l in f]
    out = []
    for l in lines:
        row = []
        for v in l.split(","):
            try:
                row.append((0, float(v)))
            except ValueError:
                row.append((1, v))
        out.append(row)
    return sorted(out, key=lambda r: [(k, str(v)) if k else (k, v) for k, v in r])


def close(a, b):
    if a[0] != b[0]:
        return False
    if a[0]:
        return a[1] == b[1]
    return abs(a[1] - b[1]) <= 1e-6 * max(1.0, abs(a[1]), abs(b[1]))


exp = rows(sys.argv[1])
got = rows(sys.argv[2])
if len(exp) != len(got):
    sys.exit("%d lines expected, %d got" % (len(exp), len(got)))
for i, (e, g) in enumerate(zip(exp, got)):
    if len(e) != len(g) or not all(close(x, y) for x, y in zip(e, g)):
        sys.exit("line %d (sorted) differs: %r vs %r" % (i, e, g))
