/*
 * csvq.c -- gqp_csvq: run a SQL script on an empty in-memory database and
 * print the last statement's result with its column names and types, for
 * tests/csv/check_duckdb.py (read_csv's sniffer against DuckDB's).
 *
 *   gqp_csvq [--device cpu|gpu|auto] SQL
 *
 * Output: one line "C<TAB>name<TAB>TYPE" per column (TYPE: INT64,
 * FLOAT64, DATE, STRING, ... as gqp's type names), then one line per row,
 * values separated by TAB, NULL as "\N", '\\', TAB, CR and newline
 * escaped as \\ \t \r \n. On an error: "E<TAB>message" (newlines as \n)
 * and exit status 1.
 */
#include <stdio.h>
#include <string.h>

#include "gqp.h"

/* Write s with '\\', TAB, CR and newline escaped. */
static void put_text(const char *s) {
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\\\", stdout);
        else if (*s == '\t')
            fputs("\\t", stdout);
        else if (*s == '\n')
            fputs("\\n", stdout);
        else if (*s == '\r')
            fputs("\\r", stdout);
        else
            putchar(*s);
    }
}

/* gqp's name of a result column type. */
static const char *type_name(gqp_type t) {
    static const char *names[] = {"NULL", "INT32", "INT64",  "FLOAT32", "FLOAT64",
                                  "DATE", "BOOL",  "STRING", "DECIMAL"};
    return (unsigned)t < sizeof names / sizeof names[0] ? names[t] : "?";
}

/* Print the error of db (one line) and return 1. */
static int fail(gqp *db) {
    fputs("E\t", stdout);
    put_text(gqp_errmsg(db));
    putchar('\n');
    return 1;
}

int main(int argc, char **argv) {
    gqp_device dev = GQP_DEVICE_CPU;
    int a = 1;
    if (a + 1 < argc && strcmp(argv[a], "--device") == 0) {
        dev = strcmp(argv[a + 1], "gpu")
                  ? strcmp(argv[a + 1], "auto") ? GQP_DEVICE_CPU : GQP_DEVICE_AUTO
                  : GQP_DEVICE_GPU;
        a += 2;
    }
    if (a + 1 != argc) {
        fprintf(stderr, "usage: gqp_csvq [--device cpu|gpu|auto] SQL\n");
        return 2;
    }
    gqp *db = NULL;
    if (gqp_open(NULL, &db) != GQP_OK) {
        fprintf(stderr, "gqp_csvq: cannot open a database\n");
        return 2;
    }
    gqp_set_device(db, dev);
    const char *sql = argv[a], *tail = sql;
    int rc = 0;
    while (*tail && rc == 0) {
        gqp_stmt *st = NULL;
        if (gqp_prepare(db, tail, -1, &st, &tail) != GQP_OK) {
            rc = fail(db);
            break;
        }
        if (!st) break;
        int s, n = gqp_column_count(st), header = 0;
        while ((s = gqp_step(st)) == GQP_ROW) {
            if (!header && (header = 1))
                for (int c = 0; c < n; c++)
                    printf("C\t%s\t%s\n", gqp_column_name(st, c),
                           type_name(gqp_column_type(st, c)));
            for (int c = 0; c < n; c++) {
                if (c) putchar('\t');
                const char *v = gqp_column_text(st, c);
                if (v)
                    put_text(v);
                else
                    fputs("\\N", stdout);
            }
            putchar('\n');
        }
        if (s != GQP_DONE)
            rc = fail(db);
        else if (!header)
            for (int c = 0; c < n; c++)
                printf("C\t%s\t%s\n", gqp_column_name(st, c), type_name(gqp_column_type(st, c)));
        gqp_finalize(st);
    }
    gqp_close(db);
    return rc;
}
