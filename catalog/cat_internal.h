/*
 * cat_internal.h -- helpers shared by the files of catalog/ only. Nothing
 * outside catalog/ includes this header; the public contract is catalog.h.
 */
#ifndef GQP_CAT_INTERNAL_H
#define GQP_CAT_INTERNAL_H

#include "catalog/catalog.h"

#include <stdarg.h>

/* Longest offending value quoted in an error message (longer ones are cut
 * and end in "..."). */
#define CAT_ERR_VALUE_MAX 64

/* Write "Catalog Error: " followed by the formatted text into err (which may
 * be NULL). Always returns -1 so callers can `return cat_err(...)`. */
int cat_err(CatError *err, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Copy at most CAT_ERR_VALUE_MAX bytes of s[0..len) into buf (size >=
 * CAT_ERR_VALUE_MAX + 4), NUL-terminated, adding "..." when cut; control
 * bytes become spaces and bytes that are not UTF-8 '?'. Returns buf. */
char *cat_err_value(char *buf, const char *s, size_t len);

/* Length (1..4) of the well-formed UTF-8 sequence that starts s[0..n), or
 * 0 when none does (stray continuation byte, overlong form, surrogate,
 * above U+10FFFF, cut short). */
int cat_utf8_len(const char *s, size_t n);
/* Offset of the first byte of s[0..n) that is not part of well-formed
 * UTF-8, or n when all of it is. */
size_t cat_utf8_check(const char *s, size_t n);

/* Number of worker threads to use (online processors, at least 1, at most
 * 64). */
int cat_nthreads(void);

/* Create directory dir and its missing parents (mode 0777 & ~umask).
 * Returns 0 (also when it exists), or -1 with errno set. */
int cat_mkdirs(const char *dir);

/* malloc'ed "a" "b" "c" concatenated; NULL when out of memory. Any of the
 * three may be "". */
char *cat_concat3(const char *a, const char *b, const char *c);

/* Run fn(arg, i) for i in [0, n): on up to 64 threads when n > 1 (the
 * calling thread runs i = 0 and any i >= 64), inline for the indexes whose
 * thread could not be created. Returns when every call has returned. */
void cat_parallel(int n, void (*fn)(void *arg, int i), void *arg);

/* A new empty table (0 rows) with copies of the given names; STRING columns
 * get an empty dictionary. Returns NULL on allocation failure. The caller
 * owns it (cat_table_free). Names are not validated here. */
CatTable *cat_table_new(const char *name, int ncols, const char *const *col_names,
                        const CatType *col_types);
/* Free a table and everything it owns; NULL is a no-op. */
void cat_table_free(CatTable *t);

/* Read all of path into a cat_host_alloc block, NUL-terminated. Returns it
 * with *len set, or NULL with err set; when missing_ok and the file does
 * not exist, NULL with *len = 0 and err untouched. */
void *cat_read_file(const char *path, size_t *len, int missing_ok, CatError *err);

/* The '\n' that ends the CSV / .tbl row starting at p, or end. With
 * quoting, a '"' at the start of a field opens a quoted field (in which
 * "" is a quote and a newline does not end the row); a '"' anywhere else
 * is an ordinary character (a bare quote, as SQLite and DuckDB read it). */
const char *cat_text_row_end(const char *p, const char *end, int quoting, char delim);

/* Helpers of the data generators (gen_test.c, gen_ssb.c). */
/* splitmix64 step: a bijective mix of x (per-row deterministic streams). */
uint64_t cat_splitmix64(uint64_t x);
/* Write integer v in decimal at p; returns the new end. */
char *cat_put_int(char *p, int64_t v);
/* Write n bytes to path: a new file renamed over it (atomic; a mapping of
 * the old file keeps its pages). Returns 0 or -1 with err. */
int cat_write_text(const char *path, const void *data, size_t n, CatError *err);
/* Add t to cat (taking ownership). Returns 0, or -1 with err set when a
 * table of that name exists or memory runs out (t is then still the
 * caller's). */
int cat_catalog_add(Catalog *cat, CatTable *t, CatError *err);

/* Build a sorted dictionary from the n strings whose valid[i] is nonzero
 * (all when valid is NULL); codes[i] receives each string's rank, 0 for
 * invalid entries. Returns NULL on allocation failure or when there are more
 * than INT32_MAX distinct strings. Caller frees with cat_dict_free(). */
CatDict *cat_dict_build_masked(const char *const *strs, const size_t *lens, int64_t n,
                               const uint8_t *valid, int32_t *codes);
/* The same dictionary and codes as cat_dict_build_masked (codes must not be
 * NULL), built on nthreads threads when n is large: the strings are split
 * into ranges of the dictionary order at sampled splitters, and each range
 * is deduplicated and sorted on its own. */
CatDict *cat_dict_build_par(const char *const *strs, const size_t *lens, int64_t n,
                            const uint8_t *valid, int32_t *codes, int nthreads);
/* An empty dictionary (n = 0), or NULL on allocation failure. */
CatDict *cat_dict_empty(void);

/* Appending to a dictionary (INSERT), in two steps so that an INSERT is all
 * or nothing. cat_dict_reserve() makes room for more_n more strings of
 * more_bytes bytes in all (NULs included) and builds the hash index; it may
 * move d->bytes, in which case *old_bytes receives the old block, still
 * holding the same strings, for the caller to cat_host_free() once no
 * pointer into it is in use (else NULL). Returns 0, or -1 (out of memory,
 * more than INT32_MAX strings) with d unchanged. Then cat_dict_append(),
 * which cannot fail, returns the code of s[0..len), appending it when new
 * (d->unsorted is set when it does not sort after the last string). */
int cat_dict_reserve(CatDict *d, int64_t more_n, size_t more_bytes, char **old_bytes);
int32_t cat_dict_append(CatDict *d, const char *s, size_t len);
/* When d->unsorted: sort d and re-code codes[0..nrows) (the codes of rows
 * whose valid[i] is 0 become 0; valid may be NULL) so codes are ranks
 * again. Returns 0, or -1 when out of memory (d and codes unchanged). */
int cat_dict_sort(CatDict *d, int32_t *codes, const uint8_t *valid, int64_t nrows);

/* Strict field parsers shared by the text loader and INSERT. Each parses
 * the whole of s[0..len) (no surrounding spaces) and returns 0, or -1 when
 * the text is not entirely one value of that type (or out of range). */
int cat_parse_i64(const char *s, size_t len, int64_t *out);
int cat_parse_i32(const char *s, size_t len, int32_t *out);
int cat_parse_f64(const char *s, size_t len, double *out);
int cat_parse_bool(const char *s, size_t len, uint8_t *out);

/* Readers behind cat_load_table(), which has already validated def (names,
 * types, delimiter). Each returns a complete new table (rows, dictionaries,
 * source set; stats not yet computed) owned by the caller, or NULL with err
 * set; nothing is left allocated on error. */
CatTable *cat_read_text(const CatTableDef *def, CatError *err);
CatTable *cat_read_binary(const CatTableDef *def, CatError *err);
/* Release column c's data (munmap when it is a mapped binary column, else
 * cat_host_free); data becomes NULL. */
void cat_column_free_data(CatColumn *c);
/* Compute the statistics of every column of the binary folder def names
 * (written by other means than cat_write_binary) and write them beside
 * its columns as <column>.stats. Returns 0, or -1 with err set. */
int cat_binary_write_stats(const CatTableDef *def, CatError *err);

/* Compute the statistics of one column in place. */
void cat_column_stats(CatColumn *c);
/* Write c's statistics (current: stats.rows == n) to path (a new file
 * renamed over it). Returns 0, or -1 with err set. */
int cat_stats_write(const CatColumn *c, const char *path, CatError *err);
/* Read statistics written by cat_stats_write from path into c->stats when
 * they describe `rows` rows. Returns 1 when read, 0 otherwise (missing,
 * malformed or for another row count: c unchanged). */
int cat_stats_read(CatColumn *c, const char *path, int64_t rows);

/* One value of a row for the UNIQUE check (index.c). */
typedef struct CatCell {
    int null;
    int64_t i;     /* integer, DATE, BOOL */
    double f;      /* FLOAT32 / FLOAT64 */
    const char *s; /* STRING bytes (len of them) */
    size_t len;
} CatCell;
/* Reads column col, row r of a table as it would be after a change. */
typedef void (*CatCellFn)(const void *ud, int col, int64_t r, CatCell *out);
/* The value of stored column c at row r. */
void cat_cell_of(const CatColumn *c, int64_t r, CatCell *out);
/* Check every UNIQUE index of t over the nrows rows that fn reads (the
 * table as it would be). Returns 0, or -1 with err "Constraint Error:
 * UNIQUE constraint failed: t.a, t.b" (or out of memory). */
int cat_unique_check(const CatTable *t, int64_t nrows, CatCellFn fn, const void *ud, CatError *err);
/* Free t's indexes. */
void cat_indexes_free(CatTable *t);

#endif /* GQP_CAT_INTERNAL_H */
