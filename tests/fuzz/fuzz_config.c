/*
 * fuzz_config.c -- libFuzzer harness for the YAML config loader through the
 * public API: the input is written to <tmpdir>/gqp.yaml (the loader takes a
 * path) and opened with gqp_open(), which parses it and loads every table it
 * declares; a table that loads is queried once (SELECT * FROM t). The
 * temporary folder holds small data files a config may name: t.csv (with a
 * header), t.tbl, and b/ (a binary-column table: i.bin INT32, s.bin +
 * s.dict STRING).
 *
 * Inputs holding '/', '\\' or ".." are skipped so a config can only name
 * files in that folder (never /dev/zero or a huge file: those would be
 * timeouts, not findings). Errors are expected; crashes, sanitizer reports
 * and leaks are findings.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gqp.h"

static char dir[64], yaml[96];

/* Write len bytes of s to dir/name. */
static void put(const char *name, const void *s, size_t len) {
    char p[160];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    if (!f) abort();
    fwrite(s, 1, len, f);
    fclose(f);
}

/* libFuzzer hook: create the folder and its data files. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    snprintf(dir, sizeof dir, "/tmp/gqp-fuzz-config-%ld", (long)getpid());
    mkdir(dir, 0700);
    char b[128];
    snprintf(b, sizeof b, "%s/b", dir);
    mkdir(b, 0700);
    snprintf(yaml, sizeof yaml, "%s/gqp.yaml", dir);
    static const char csv[] = "id,name,price,day\n1,apple,1.5,2020-01-05\n2,,,\n3,\"x,y\",-0.0,"
                              "1999-12-31\n";
    put("t.csv", csv, sizeof csv - 1);
    static const char tbl[] = "1|apple|1.5|2020-01-05|\n2|||| \n";
    put("t.tbl", tbl, sizeof tbl - 1);
    int32_t ints[3] = {1, -5, 2147483647}, codes[3] = {0, 1, 0};
    put("b/i.bin", ints, sizeof ints);
    put("b/s.bin", codes, sizeof codes);
    put("b/s.dict", "a\nb\n", 4);
    return 0;
}

/* libFuzzer hook: open one input as a config, query table t if it loaded. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 8192 || memchr(data, '/', size) || memchr(data, '\\', size)) return 0;
    for (size_t i = 0; i + 1 < size; i++)
        if (data[i] == '.' && data[i + 1] == '.') return 0;
    put("gqp.yaml", data, size);
    gqp *db = NULL;
    (void)gqp_open(yaml, &db);
    if (!db) return 0;
    gqp_set_device(db, GQP_DEVICE_CPU);
    gqp_set_threads(db, 1);
    gqp_stmt *st = NULL;
    if (gqp_prepare(db, "SELECT * FROM t", -1, &st, NULL) == GQP_OK && st) {
        int n = gqp_column_count(st);
        while (gqp_step(st) == GQP_ROW)
            for (int c = 0; c < n; c++)
                (void)gqp_column_text(st, c);
    }
    gqp_finalize(st);
    gqp_close(db);
    return 0;
}
