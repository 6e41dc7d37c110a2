/*
 * hello.c -- the smallest program that embeds libgqp: open a database with
 * an optional YAML config, run one query, print its rows, close.
 *
 *   make && ./hello [config.yaml] ["SQL"]
 *
 * Without arguments it builds a table with CREATE TABLE / INSERT and queries
 * it. Exit 0 on success, 1 on error (gqp's message on stderr).
 */
#include <stdio.h>

#include "gqp.h"

/* Run sql on db, printing every row as tab-separated text (NULL as NULL).
 * Returns 0, or 1 after printing the error. */
static int print_query(gqp *db, const char *sql) {
    const char *tail = sql;
    while (*tail) {
        gqp_stmt *st = NULL;
        int rc = gqp_prepare(db, tail, -1, &st, &tail);
        if (rc != GQP_OK) {
            fprintf(stderr, "%s\n", gqp_errmsg(db));
            return 1;
        }
        if (!st) break;
        int ncols = gqp_column_count(st);
        for (int c = 0; c < ncols; c++)
            printf("%s%s", c ? "\t" : "", gqp_column_name(st, c));
        if (ncols) printf("\n");
        while ((rc = gqp_step(st)) == GQP_ROW) {
            for (int c = 0; c < ncols; c++) {
                const char *v = gqp_column_text(st, c);
                printf("%s%s", c ? "\t" : "", v ? v : "NULL");
            }
            printf("\n");
        }
        gqp_finalize(st);
        if (rc != GQP_DONE) {
            fprintf(stderr, "%s\n", gqp_errmsg(db));
            return 1;
        }
    }
    return 0;
}

/* Open the database named by argv[1] (or an empty one), run argv[2] or the
 * built-in demo script. Returns the exit status. */
int main(int argc, char **argv) {
    const char *config = argc > 1 ? argv[1] : NULL;
    const char *sql = argc > 2 ? argv[2]
                               : "CREATE TABLE greet(id INTEGER, word TEXT);"
                                 "INSERT INTO greet VALUES (1, 'hello'), (2, 'world');"
                                 "SELECT id, word FROM greet ORDER BY id;";
    gqp *db = NULL;
    if (gqp_open(config, &db) != GQP_OK) {
        fprintf(stderr, "%s\n", db ? gqp_errmsg(db) : "out of memory");
        gqp_close(db);
        return 1;
    }
    printf("libgqp %s, GPU %s\n", gqp_libversion(), gqp_gpu_available() ? "yes" : "no");
    int status = print_query(db, sql);
    gqp_close(db);
    return status;
}
