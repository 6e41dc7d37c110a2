/*
 * fuzz_load.c -- libFuzzer harness for the CSV / .tbl loader
 * (cat_load_table, the text parser, dictionary building and statistics).
 *
 * Input layout: byte 0 picks the format (bit 0: csv / tbl), the header flag
 * (bit 1) and a delimiter override (bits 2-3: default, ';', tab, '|');
 * byte 1 the column count (1 + byte % 6); bytes 2 .. 2+ncols-1 one type each
 * (INT32 INT64 FLOAT32 FLOAT64 DATE BOOL STRING, byte % 7); the rest is the
 * file's content, written to a temporary file because the loader takes a
 * path. Bit 4 of byte 0 sends the file through read_csv's sniffer instead
 * (cat_load_csv_auto: bits 2-3 the delimiter or 0 = sniffed, bits 5-6 the
 * header: sniffed, no, yes, sniffed; bit 7 nullstr '\N'). Load errors are
 * expected; crashes, sanitizer reports and leaks are findings. A table
 * that loads is dropped with its catalog.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "catalog/catalog.h"

static char path[64];

/* libFuzzer hook: create the temporary file the inputs are written to. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    snprintf(path, sizeof path, "/tmp/gqp-fuzz-load-%ld.txt", (long)getpid());
    return 0;
}

/* libFuzzer hook: load one input as a CSV or .tbl file. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const CatType types[7] = {CAT_INT32, CAT_INT64, CAT_FLOAT32, CAT_FLOAT64,
                                     CAT_DATE,  CAT_BOOL,  CAT_STRING};
    static const char *names[6] = {"c0", "c1", "c2", "c3", "c4", "c5"};
    static const char delims[4] = {0, ';', '\t', '|'};
    if (size < 2) return 0;
    int ncols = 1 + data[1] % 6;
    if (size < (size_t)(2 + ncols)) return 0;
    CatType ct[6];
    for (int i = 0; i < ncols; i++)
        ct[i] = types[data[2 + i] % 7];
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data + 2 + ncols, 1, size - 2 - (size_t)ncols, f);
    fclose(f);
    CatTableDef def = {0};
    def.name = "t";
    def.source = path;
    def.format = (data[0] & 1) ? CAT_FMT_TBL : CAT_FMT_CSV;
    def.header = (data[0] >> 1) & 1;
    char d = delims[(data[0] >> 2) & 3];
    def.delimiter = d ? d : (def.format == CAT_FMT_TBL ? '|' : ',');
    def.ncols = ncols;
    def.col_names = names;
    def.col_types = ct;
    Catalog *cat = cat_catalog_new();
    CatError err;
    if (cat && (data[0] & 16)) {
        static const char *const nulls[] = {"\\N"};
        CatCsvOpts o = {0};
        o.format = def.format;
        o.delim = d;
        o.header = ((data[0] >> 5) & 3) % 3 - 1;
        o.nulls = (data[0] & 128) ? nulls : NULL;
        o.nnulls = (data[0] & 128) ? 1 : 0;
        (void)cat_load_csv_auto(cat, "t", path, &o, NULL, &err);
        cat_catalog_free(cat);
    } else if (cat) {
        (void)cat_load_table(cat, &def, &err);
        cat_catalog_free(cat);
    }
    return 0;
}
