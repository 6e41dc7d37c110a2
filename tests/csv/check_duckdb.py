#!/usr/bin/env python3
"""read_csv's sniffer against DuckDB's (tests/csv/, ctest csv.duckdb).

    check_duckdb.py GQP_CSVQ [WORKDIR]

Writes small CSV / .tbl files of varied shape into WORKDIR (a temporary
folder by default), reads each with gqp (build/tests/gqp_csvq: column
names, types and rows of `SELECT * FROM read_csv('f', ...)`) and with
python3's duckdb (DESCRIBE and the rows of the same call), and compares:
the column names, the types (DuckDB's mapped to gqp's: BIGINT -> INT64,
DOUBLE -> FLOAT64, DATE -> DATE, VARCHAR -> STRING) and the rows as text
(reals numerically). Exit status 0 when every file agrees, 1 otherwise,
77 (skipped) when duckdb cannot be imported.
"""
import datetime
import os
import subprocess
import sys
import tempfile

try:
    import duckdb
except ImportError:
    print("duckdb is not importable: skipped")
    sys.exit(77)

TYPES = {"BIGINT": "INT64", "DOUBLE": "FLOAT64", "DATE": "DATE", "VARCHAR": "STRING"}

# name -> bytes. Every shape the sniffer decides on: header or not, the
# delimiter, each type and their widening, NULLs, quoting, line ends.
FILES = {
    "basic.csv": b"id,price,name,day\n1,2.5,apple,2024-01-31\n2,,pear,\n3,10,,2023-12-01\n",
    "noheader.csv": b"1,x,2020-02-29\n2,y,2021-03-01\n3,z,1999-12-31\n",
    "pipe.csv": b"a|b|c\n1|hello, world|3.25\n4|x|-1e3\n",
    "semicolon.csv": b"k;v\n10;ten\n20;twenty\n-30;minus thirty\n",
    "tab.tsv": b"n\tword\tr\n1\tone\t0.5\n2\ttwo words\t.25\n",
    "bigint.csv": b"small,big,huge\n1,9223372036854775807,9223372036854775808\n"
                  b"-1,-9223372036854775808,1\n",
    "widen.csv": b"i,d,t,s\n1,1,2020-01-01,1\n2,2.5,2020-01-02,abc\n3,3,2020-01-03,2.5\n",
    "quoted.csv": b'id,text,n\n1,"a, b",1\n2,"line one\nline two",2\n3,"say ""hi""",3\n'
                  b'4,"",4\n5,"x,""y"",\nz",5\n',
    "barequote.csv": b'a,b,c\n1,5"11,x\n2,it"s,y\n3,"q,r",z\n',
    "crlf.csv": b"x,y\r\n1,a\r\n2,b\r\n\r\n",
    "bom.csv": b"\xef\xbb\xbfcol1,col2\n1,a\n2,b\n",
    "allnull.csv": b"a,b,c\n1,,x\n2,,y\n",
    "names.csv": b"a,,A,a_1, spaced \n1,2,3,4,5\n",
    "onecol.csv": b"v\n1\n\n3\n",
    "textonly.csv": b"first,second\nfoo,bar\nbaz,qux\n",
    "headerless_text.csv": b"1,foo\n2,bar\n",
    "negzero.csv": b"a,b\n0,-0\n-5,0.0\n",
    "leadingzero.csv": b"zip,n\n00501,1\n10001,2\n",
    "nulls.csv": b"a,b\n1,\\N\n\\N,x\nNA,NA\n",
    "utf8.csv": "name,city\nJos\u00e9,S\u00e3o Paulo\n\u6771\u4eac,\u5927\u962a\n".encode(),
    "reals.csv": b"a,b\n5.,1\n.5,2\n1e5,3\n1E+05,4\n-.5e-3,5\n1e400,6\n",
    "baddate.csv": b"d,e\n2020-02-30,2024-02-29\n2021-01-01,1900-01-01\n",
    "quotedheader.csv": b'"a,b","say ""x""",c\n1,2,3\n',
    "dbgen.tbl": b"1|Customer#1|12.50|1995-03-15|\n2|Customer#2|-3.00|1996-01-02|\n",
}

# (file, options as written in both engines' read_csv call)
CASES = [(f, "") for f in FILES] + [
    ("nulls.csv", r", nullstr='\N'"),
    ("nulls.csv", r", nullstr=['\N', 'NA']"),
    ("basic.csv", ", header=false"),
    ("pipe.csv", ", delim='|'"),
    ("basic.csv", ", columns={'i': 'BIGINT', 'p': 'DOUBLE', 'n': 'VARCHAR', 'd': 'DATE'}"),
    ("basic.csv", ", types={'id': 'VARCHAR'}"),
]


def duck_rows(path, opts):
    """DuckDB's (names, types, rows) of read_csv(path opts); a .tbl file is
    read as dbgen writes it ('|', no header, the trailing '|' dropped)."""
    if path.endswith(".tbl"):
        opts = ", delim='|', header=false" + opts
    q = f"SELECT * FROM read_csv('{path}'{opts})"
    con = duckdb.connect()
    desc = con.sql("DESCRIBE " + q).fetchall()
    rows = con.sql(q).fetchall()
    names = [d[0] for d in desc]
    types = [d[1] for d in desc]
    if path.endswith(".tbl") and types[-1] == "VARCHAR" and all(r[-1] is None for r in rows):
        names, types, rows = names[:-1], types[:-1], [r[:-1] for r in rows]
    return names, [TYPES.get(t, "?" + t) for t in types], rows


def gqp_rows(csvq, path, opts, use_literal):
    """gqp's (names, types, rows as text) of the same call, or an error."""
    src = f"'{path}'" if use_literal else f"read_csv('{path}'{opts})"
    out = subprocess.run([csvq, f"SELECT * FROM {src}"], capture_output=True, timeout=60)
    lines = out.stdout.decode().split("\n")
    if out.returncode != 0 or any(l.startswith("E\t") for l in lines):
        return None, None, "\n".join(lines) + out.stderr.decode()
    names, types, rows = [], [], []
    for line in lines:
        if not line:
            continue
        if line.startswith("C\t"):
            _, n, t = line.split("\t")
            names.append(n)
            types.append(t)
        else:
            rows.append([unescape(v) for v in line.split("\t")])
    return names, types, rows


def unescape(v):
    """A value of gqp_csvq's output: None for NULL, else the text."""
    if v == "\\N":
        return None
    out, i = [], 0
    while i < len(v):
        if v[i] == "\\" and i + 1 < len(v):
            out.append({"t": "\t", "n": "\n", "r": "\r", "\\": "\\"}[v[i + 1]])
            i += 2
        else:
            out.append(v[i])
            i += 1
    return "".join(out)


def same_value(g, d):
    """gqp's text g equals DuckDB's value d."""
    if d is None or g is None:
        return d is None and g is None
    if isinstance(d, float):
        try:
            x = float(g)
        except ValueError:
            return False
        return x == d or abs(x - d) <= 1e-12 * max(abs(x), abs(d))
    if isinstance(d, datetime.date):
        return g == d.isoformat()
    return g == str(d)


def main():
    csvq = os.path.abspath(sys.argv[1])
    work = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="gqp_csv_")
    os.makedirs(work, exist_ok=True)
    os.chdir(work)
    for name, data in FILES.items():
        with open(name, "wb") as f:
            f.write(data)
    bad = 0
    for path, opts in CASES:
        for literal in ([False, True] if not opts else [False]):
            label = f"'{path}'" if literal else f"read_csv('{path}'{opts})"
            dn, dt, drows = duck_rows(path, opts)
            gn, gt, grows = gqp_rows(csvq, path, opts, literal)
            problems = []
            if gn is None:
                problems.append("gqp failed: " + grows.strip())
            else:
                if gn != dn:
                    problems.append(f"names: gqp {gn} duckdb {dn}")
                if gt != dt:
                    problems.append(f"types: gqp {gt} duckdb {dt}")
                if len(grows) != len(drows):
                    problems.append(f"rows: gqp {len(grows)} duckdb {len(drows)}")
                for i, (g, d) in enumerate(zip(grows, drows)):
                    if len(g) != len(d) or not all(same_value(a, b) for a, b in zip(g, d)):
                        problems.append(f"row {i + 1}: gqp {g} duckdb {list(d)}")
                        break
            if problems:
                bad += 1
                print(f"FAIL {label}:\n  " + "\n  ".join(problems))
            else:
                print(f"ok   {label}: {' '.join(f'{n}:{t}' for n, t in zip(gn, gt))}")
    print(f"{len(CASES)} cases, {bad} failing")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
