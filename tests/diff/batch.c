/*
 * batch.c -- gqp_batch: run many SQL requests in one process, for the
 * differential tester (tests/diff/gqpdiff.py).
 *
 *   gqp_batch [--device cpu|gpu|auto] [--threads N]
 *
 * Reads requests from stdin, one per line; a line is a SQL script (its
 * statements separated by ';', no newlines inside) run on the current
 * database, or a command:
 *
 *   #reset            drop the database, start a fresh empty one
 *   #device D         set the device (cpu|gpu|auto) for later requests
 *
 * For each request it writes one block to stdout, then flushes:
 *
 *   per statement that ran:  "R <ncols>"  then one line per row, values
 *                            separated by TAB: "N" (NULL), "i<int64>"
 *                            (INT32/INT64/BOOL), "f<%.17g>" (FLOAT32/64),
 *                            "t<text>" (STRING and DATE; '\\', TAB and
 *                            newline escaped as \\ \t \n)
 *   on the first error:      "X <message on one line>" (the rest of the
 *                            script is skipped)
 *   at the end:              "."
 *
 * Commands answer "." alone. Exit status 0 at end of input; a crash is
 * the caller's finding.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gqp.h"

static gqp_device device = GQP_DEVICE_CPU;
static int threads = 1;

/* Write s to o with '\\', TAB and newline escaped. */
static void put_text(FILE *o, const char *s) {
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\\\", o);
        else if (*s == '\t')
            fputs("\\t", o);
        else if (*s == '\n')
            fputs("\\n", o);
        else if (*s == '\r')
            fputs("\\r", o);
        else
            fputc(*s, o);
    }
}

/* Open a fresh empty database with the current device and threads. */
static gqp *fresh(void) {
    gqp *db = NULL;
    if (gqp_open(NULL, &db) != GQP_OK) {
        fprintf(stderr, "gqp_batch: cannot open a database\n");
        exit(2);
    }
    if (gqp_set_device(db, device) != GQP_OK) fprintf(stderr, "gqp_batch: %s\n", gqp_errmsg(db));
    gqp_set_threads(db, threads);
    return db;
}

/* Write the error of db as an "X" line. */
static void put_error(gqp *db) {
    fputs("X ", stdout);
    put_text(stdout, gqp_errmsg(db));
    fputc('\n', stdout);
}

/* Run every statement of sql on db, writing its result blocks. */
static void run(gqp *db, const char *sql) {
    const char *p = sql, *end = sql + strlen(sql);
    while (p < end) {
        gqp_stmt *st = NULL;
        const char *tail = NULL;
        if (gqp_prepare(db, p, end - p, &st, &tail) != GQP_OK) {
            put_error(db);
            gqp_finalize(st);
            return;
        }
        if (!st) break;
        int n = gqp_column_count(st), rc;
        /* buffer the rows: an error in a later step must not leave half a result */
        char *buf = NULL;
        size_t blen = 0;
        FILE *o = open_memstream(&buf, &blen);
        if (!o) {
            fprintf(stderr, "gqp_batch: out of memory\n");
            exit(2);
        }
        while ((rc = gqp_step(st)) == GQP_ROW) {
            for (int c = 0; c < n; c++) {
                if (c) fputc('\t', o);
                if (gqp_column_is_null(st, c)) {
                    fputc('N', o);
                    continue;
                }
                switch (gqp_value_type(st, c)) {
                case GQP_TYPE_INT32:
                case GQP_TYPE_INT64:
                case GQP_TYPE_BOOL:
                    fprintf(o, "i%lld", (long long)gqp_column_int64(st, c));
                    break;
                case GQP_TYPE_FLOAT32:
                case GQP_TYPE_FLOAT64:
                    fprintf(o, "f%.17g", gqp_column_double(st, c));
                    break;
                default:
                    fputc('t', o);
                    put_text(o, gqp_column_text(st, c));
                    break;
                }
            }
            fputc('\n', o);
        }
        fclose(o);
        if (rc != GQP_DONE) {
            put_error(db);
            free(buf);
            gqp_finalize(st);
            return;
        }
        printf("R %d\n", n);
        fwrite(buf, 1, blen, stdout);
        free(buf);
        gqp_finalize(st);
        if (!tail || tail <= p) break;
        p = tail;
    }
}

/* Parse options, then answer requests until end of input. */
int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            const char *d = argv[++i];
            device = strcmp(d, "gpu") == 0    ? GQP_DEVICE_GPU
                     : strcmp(d, "auto") == 0 ? GQP_DEVICE_AUTO
                                              : GQP_DEVICE_CPU;
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: gqp_batch [--device cpu|gpu|auto] [--threads N]\n");
            return 2;
        }
    }
    gqp *db = fresh();
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) >= 0) {
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (strcmp(line, "#reset") == 0) {
            gqp_close(db);
            db = fresh();
        } else if (strncmp(line, "#device ", 8) == 0) {
            const char *d = line + 8;
            device = strcmp(d, "gpu") == 0    ? GQP_DEVICE_GPU
                     : strcmp(d, "auto") == 0 ? GQP_DEVICE_AUTO
                                              : GQP_DEVICE_CPU;
            gqp_set_device(db, device);
        } else if (len > 0) {
            run(db, line);
        }
        puts(".");
        fflush(stdout);
    }
    free(line);
    gqp_close(db);
    return 0;
}
