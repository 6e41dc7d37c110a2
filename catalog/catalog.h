/*
 * catalog.h -- types, column-major tables, string dictionaries, statistics
 * and loading (YAML config, CSV / .tbl, binary columns). Knows nothing of SQL.
 *
 * Memory: a Catalog owns its tables; a table owns its columns; a column owns
 * its data, validity and dictionary. Everything is released by
 * cat_catalog_free(). Host arrays are allocated with cat_host_alloc() so a
 * CUDA build may pin them later.
 *
 * Errors: functions return 0 on success, -1 on error with a message in the
 * CatError the caller passed ("Catalog Error: file:line: column 'x': ...").
 */
#ifndef GQP_CATALOG_H
#define GQP_CATALOG_H

#include <stddef.h>
#include <stdint.h>

/* Values match gqp_type in include/gqp.h. */
typedef enum CatType {
    CAT_NULL = 0, /* only for literals / all-NULL expressions */
    CAT_INT32 = 1,
    CAT_INT64 = 2,
    CAT_FLOAT32 = 3,
    CAT_FLOAT64 = 4,
    CAT_DATE = 5,   /* int32 days since 1970-01-01 */
    CAT_BOOL = 6,   /* uint8_t 0/1 */
    CAT_STRING = 7, /* int32 codes into a sorted CatDict */
    CAT_DECIMAL = 8 /* int64 value * 10^scale (DECIMAL(prec, scale), prec <= 18) */
} CatType;

/* DECIMAL's limits: precision 1..CAT_DEC_MAX_PREC, scale 0..precision;
 * DECIMAL alone is DuckDB's DECIMAL(18,3). */
#define CAT_DEC_MAX_PREC 18
#define CAT_DEC_DEFAULT_PREC 18
#define CAT_DEC_DEFAULT_SCALE 3

/* Bytes per value of a stored column of type t (STRING: its int32 code). */
size_t cat_type_width(CatType t);
/* "INT32", "FLOAT64", ... static string. */
const char *cat_type_name(CatType t);
/* Parse a type name from YAML or SQL (case-insensitive): INT32 INT64 FLOAT32
 * FLOAT64 DATE BOOL STRING and the SQL spellings INTEGER INT BIGINT SMALLINT
 * (-> INT64 except SMALLINT/INT32 -> INT32), REAL DOUBLE FLOAT (-> FLOAT64),
 * BOOLEAN, TEXT VARCHAR CHAR (with or without (n)) -> STRING. Returns -1 if
 * unknown. */
int cat_type_parse(const char *name, CatType *out);
/* cat_type_parse that also reads DECIMAL(p,s) / DECIMAL(p) / NUMERIC(...)
 * / DECIMAL (18,3): *prec and *scale are set for a DECIMAL (0 for other
 * types). Returns -1 when unknown or when p is not 1..18 or s not 0..p. */
int cat_type_parse_dec(const char *name, CatType *out, int *prec, int *scale);
/* "" or, for a DECIMAL / NUMERIC spelling that cat_type_parse_dec
 * refused, a static " (...)" hint on DECIMAL's limits for a message. */
const char *cat_type_hint(const char *name);
/* 10^k for 0 <= k <= 18 (int64). */
int64_t cat_pow10(int k);
/* Parse decimal text ([+-] digits [. digits], optionally [eE][+-]digits,
 * surrounding white space allowed) exactly into an int64 scaled by
 * 10^scale, digits past the scale rounded half away from zero (DuckDB).
 * Returns 0, 1 when malformed, 2 when the value needs more than prec
 * digits. */
int cat_parse_decimal(const char *s, size_t len, int prec, int scale, int64_t *out);
/* Text of the DECIMAL value v at scale: exactly scale digits after the
 * point ("-0.50", "0.00", "12"), as DuckDB prints it. buf >= 24 bytes. */
void cat_format_decimal(int64_t v, int scale, char *buf, size_t cap);

/* A sorted dictionary of distinct strings: string i is
 * bytes[offsets[i] .. offsets[i+1]) (not NUL-terminated in general; the
 * loader does store a NUL after each so cat_dict_str() can return a C
 * string). Codes are ranks, so code order is string order (memcmp, then
 * length). */
typedef struct CatDict {
    int64_t n;        /* number of strings */
    char *bytes;      /* all strings back to back, each followed by NUL */
    int64_t *offsets; /* n + 1 offsets into bytes (offsets[i+1]-offsets[i]-1 = length) */
    /* Appending (INSERT), managed by catalog/ only; all zero in a dictionary
     * from cat_dict_build(). While `unsorted` is set, codes are in append
     * order, not ranks: cat_table_ready() sorts the dictionary (and re-codes
     * the column) before a query reads it. */
    int unsorted;
    int64_t cap_n;              /* room for cap_n strings (0 = exactly n) */
    int64_t cap_bytes;          /* bytes allocated (0 = exactly offsets[n]) */
    struct CatDictIndex *index; /* hash index for appending, or NULL */
} CatDict;

const char *cat_dict_str(const CatDict *d, int64_t code);
int64_t cat_dict_len(const CatDict *d, int64_t code);
/* Exact lookup: code of s, or -1 if absent. */
int64_t cat_dict_find(const CatDict *d, const char *s, size_t len);
/* The dictionaries' order of two texts: bytes (memcmp), a prefix first.
 * Returns <0, 0, >0. */
int cat_text_cmp(const char *a, size_t alen, const char *b, size_t blen);
/* First code whose string is >= s (n if none): for range predicates. */
int64_t cat_dict_lower_bound(const CatDict *d, const char *s, size_t len);
/* Build a sorted dictionary from n strings (need not be distinct) and write
 * each input's code to codes[i] (int32). Returns NULL on allocation failure.
 * Caller frees with cat_dict_free(). */
CatDict *cat_dict_build(const char *const *strs, const size_t *lens, int64_t n, int32_t *codes);
void cat_dict_free(CatDict *d);

/*
 * An equi-depth histogram of a column's non-NULL values (STRING: codes),
 * built from a deterministic sample of at most CAT_HIST_SAMPLE of them (all
 * of them in smaller columns). Its bounds are the sample's values at ranks
 * 0, 1/B, 2/B, ..., 1 of the way through (B = CAT_HIST_BUCKETS), duplicates
 * merged, so a value frequent enough to fill a bucket is a bound and its
 * frequency is known exactly (in the sample):
 *
 *   val[k]      bound k, ascending and distinct; val[0] / val[n-1] are the
 *               smallest / largest sampled value
 *   lt[k]       fraction of sampled values <  val[k] (lt[0] = 0)
 *   le[k]       fraction of sampled values <= val[k] (le[n-1] = 1)
 *   gap_ndv[k]  distinct sampled values strictly between val[k] and
 *               val[k+1] (0 for k = n-1); their share is lt[k+1] - le[k]
 *
 * One malloc block (the arrays follow the struct), owned by the column's
 * CatStats and released with free().
 */
#define CAT_HIST_BUCKETS 64
#define CAT_HIST_SAMPLE 65536
typedef struct CatHist {
    int n;           /* bounds, 1 .. CAT_HIST_BUCKETS + 1 */
    int64_t nsample; /* non-NULL values sampled */
    int64_t ndv;     /* distinct values among them */
    double *val, *lt, *le, *gap_ndv;
} CatHist;

typedef struct CatStats {
    int64_t rows;
    int64_t nulls;
    int has_minmax;   /* 0 for empty / all-NULL columns */
    double min, max;  /* numeric value (STRING: min/max code) */
    int64_t distinct; /* estimate (exact for STRING: dictionary size) */
    CatHist *hist;    /* NULL when the column has no non-NULL value (or out
                         of memory); owned, freed with the column */
    int unique;       /* the non-NULL values are all distinct: 1 yes, -1 no,
                         0 not checked yet (the planner checks on demand and
                         keeps the answer until the stats are recomputed) */
    int sorted;       /* every row holds a value and the values never decrease
                         in row order: 1 yes, -1 no, 0 not checked yet (kept
                         as unique is; cat_column_sorted) */
} CatStats;

typedef struct CatColumn {
    char *name;
    CatType type;
    int64_t n;      /* rows (same as the table's) */
    void *data;     /* n values of cat_type_width(type) bytes */
    uint8_t *valid; /* NULL = no NULLs; else one byte per row, 1 = value */
    int64_t cap;    /* rows allocated in data (and valid) by INSERT; 0 = n */
    CatDict *dict;  /* STRING only */
    CatStats stats;
    int prec, scale; /* DECIMAL only: DECIMAL(prec, scale) */
    /* A column of a binary folder (format: binary) is checked at load (its
     * file sizes) but read on first use, cat_column_use(): until then data
     * is NULL, valid and dict are not read (dict is empty) and stats are
     * not computed (stats.rows = 0). Its data is then the file mapped with
     * mmap (MAP_PRIVATE: a change never reaches the file; INSERT / UPDATE /
     * DELETE move a column to the heap first). */
    char *lazy; /* <folder>/<column> while the column waits for its first use */
    void *map;  /* the mapping backing data (munmap'ed with the column), or NULL */
    size_t map_len;
    int from_file; /* 1 for a binary-folder column (read or not) */
    /* 1: a row range of another column (chunked execution's slices), whose
     * stats, those of the whole column, still bound these rows' values
     * (stats.rows != n all the same) */
    int stats_cover;
} CatColumn;

/* An index (CREATE [UNIQUE] INDEX): metadata only; a UNIQUE one is
 * enforced by INSERT / UPDATE (NULLs are distinct, as in SQLite). */
typedef struct CatIndex {
    char *name;
    int ncols;
    int *cols; /* column indexes into the table */
    int unique;
} CatIndex;

typedef struct CatTable {
    char *name;
    int ncols;
    CatColumn *cols;
    int64_t nrows;
    char *source;      /* file it was loaded from, or NULL */
    int stale;         /* INSERT appended rows: stats are out of date and string
                          dictionaries may be unsorted until cat_table_ready() */
    CatIndex *indexes; /* owned */
    int nindexes;
} CatTable;

typedef struct Catalog {
    int ntables;
    int cap;
    CatTable **tables;
} Catalog;

typedef struct CatError {
    char msg[1024];
} CatError;

Catalog *cat_catalog_new(void);
void cat_catalog_free(Catalog *cat);
/* Case-insensitive lookups; NULL / -1 if absent. */
CatTable *cat_find_table(const Catalog *cat, const char *name);
int cat_find_column(const CatTable *t, const char *name);

/*
 * Read a YAML config and load every table it declares. Format:
 *
 *   tables:
 *     - name: test
 *       source: test.csv          # relative to the config file's folder; csv / tbl:
 *                                 # or a list [a.csv, b.csv] read as one file
 *                                 # in that order (only the first has a header)
 *       format: csv               # csv | tbl | binary
 *       header: true              # csv / tbl, default false: columns are
 *                                 # matched to the header by name
 *       delimiter: ","            # default "," for csv, "|" for tbl
 *       columns:
 *         - {name: id, type: INT32}
 *   device:                       # optional settings, returned in *settings
 *     gpu_cache_bytes: 8589934592
 *     memory_limit: 4GiB          # or 25% of device memory
 *
 * binary: `source` is a folder holding one raw little-endian file per
 * column named <column>.bin (STRING: <column>.bin int32 codes plus
 * <column>.dict, the strings each followed by '\n', in code order; or,
 * when a string holds a newline, <column>.dict0 with each followed by a
 * NUL byte instead).
 * Loading checks the files' sizes (and that a STRING's .dict exists) but
 * reads nothing: each column is read when a query first uses it
 * (cat_column_use), so a bad dictionary or code is reported then.
 *
 * With a header, each declared column is the file column of the same name
 * (case-insensitive; undeclared file columns are skipped; a declared column
 * missing from the header is an error at file:1); without one, columns are
 * positional. A table whose file has a bad row (wrong field count, value
 * that does not parse, unterminated quote, invalid UTF-8 in a STRING, a NUL
 * byte anywhere) is not added (nothing half-loaded); other tables still
 * load. A key repeated in a YAML mapping is an error. Returns 0 if everything loaded, -1 otherwise
 * with the first error in err (file, line, column, offending value).
 */
typedef struct CatSettings {
    int64_t gpu_cache_bytes; /* 0 = default */
    char cost_file[512];     /* "" = default */
    /* device: memory_limit: bytes, or a share of device memory in percent
     * (both 0: no limit) */
    int64_t memory_limit_bytes;
    double memory_limit_pct;
} CatSettings;
/* Parse a memory limit as DuckDB writes one: a number with an optional
 * unit (B, KB, MB, GB, TB in powers of 1000; KiB, MiB, GiB, TiB in powers
 * of 1024; case-insensitive; none = bytes), or a percentage "25%" (more
 * than 0, at most 100), or "none"/"unlimited"/0 for no limit. 0 with
 * *bytes or *pct set (the other 0), or -1. */
int cat_parse_memory_limit(const char *txt, int64_t *bytes, double *pct);
int cat_load_config(Catalog *cat, const char *yaml_path, CatSettings *settings, CatError *err);

/* Load one table from a file; on success the table is added to cat. */
typedef enum CatFormat { CAT_FMT_CSV, CAT_FMT_TBL, CAT_FMT_BINARY } CatFormat;
/* The ad-hoc reader's rules (read_csv, catalog/sniff.c) for a CSV / .tbl
 * file; a CatTableDef without them keeps the config loader's rules. */
typedef struct CatTextOpts {
    /* a field equal to one of these, quoted or not, is NULL (DuckDB's
     * nullstr with allow_quoted_nulls); an empty number is NULL always; with
     * these options an empty text field is NULL only when "" is listed */
    const char *const *nulls;
    int nnulls;
    int skip_header;  /* the first row is a header: skipped, columns by position */
    int blank_is_row; /* a blank line is a row (one NULL field; single-column files) */
    int *bad_col;     /* out: the column of a value that did not parse, else -1 */
} CatTextOpts;
typedef struct CatTableDef {
    const char *name;
    const char *source;
    CatFormat format;
    int header;
    char delimiter;
    int ncols;
    const char *const *col_names;
    const CatType *col_types;
    const int *col_prec, *col_scale; /* DECIMAL columns' precision and scale (NULL:
                                        DECIMAL columns are DECIMAL(18,3)) */
    const CatTextOpts *text;         /* NULL: the config loader's rules */
    /* binary: the base name of each column's files in the folder (<base>.bin,
     * ...); NULL: the column's name (a database directory names them c0,
     * c1, ... so that any column name is a valid file name) */
    const char *const *col_files;
    /* CSV / .tbl: nparts > 1 files read as one text, in this order (parts[0]
     * is source; only it may hold the header line); else source alone */
    const char *const *parts;
    int nparts;
} CatTableDef;
int cat_load_table(Catalog *cat, const CatTableDef *def, CatError *err);

/*
 * Ad-hoc files (catalog/sniff.c): read_csv('f.csv') and FROM 'f.csv'. The
 * sniffer reads a sample (the first CAT_SNIFF_ROWS rows), picks the
 * delimiter among , | ; TAB (the one giving the most columns on every
 * row), the header (the first row does not fit a column's type, or every
 * column is text) and each column's type (the narrowest of INT64, FLOAT64,
 * DATE yyyy-mm-dd, STRING that reads every sampled value; numbers as
 * DuckDB reads them: no '+', no leading zeros); then the text loader loads
 * the whole file with that schema. A later value that does not fit a
 * sniffed type widens that column (INT64 -> FLOAT64 -> STRING, DATE ->
 * STRING) and the file is read again.
 */
#define CAT_SNIFF_ROWS 20480
typedef struct CatCsvOpts {
    CatFormat format;         /* CAT_FMT_CSV, or CAT_FMT_TBL ('|', a trailing '|', no header) */
    int header;               /* -1: sniffed; 0 / 1 */
    char delim;               /* 0: sniffed */
    const char *const *nulls; /* NULL markers; nnulls 0: "" only */
    int nnulls;
    /* columns={'a': 'INTEGER', ...}: every column's name and type (no
     * type sniffing); ncols 0 when not given */
    int ncols;
    const char *const *col_names;
    const char *const *col_types;
    /* types={'a': 'TEXT'} (by name) or types=['INTEGER', ...] (by position,
     * type_names NULL): the type of some columns; ntypes 0 when not given */
    int ntypes;
    const char *const *type_names;
    const char *const *type_types;
} CatCsvOpts;
/* What the sniffer chose (for EXPLAIN). */
typedef struct CatCsvInfo {
    char delim;
    int header;
    int retries; /* reads again after a value did not fit a sniffed type */
} CatCsvInfo;
/* Sniff the file at path and load it as table `name` into cat. The path
 * must name a regular file (checked before it is opened, so a FIFO or a
 * device never blocks); a missing, unreadable or empty file, a directory,
 * and a bad row are errors naming the file (and file:line); nothing is
 * added then. Returns 0 (info filled when not NULL) or -1 with err set. */
int cat_load_csv_auto(Catalog *cat, const char *name, const char *path, const CatCsvOpts *o,
                      CatCsvInfo *info, CatError *err);

/* Make column col of t readable (see CatColumn.lazy): a binary column not
 * used yet is mapped, its NULL flags and dictionary read, its codes
 * checked against the dictionary and its statistics computed. A no-op for
 * other columns and once done. Returns 0, or -1 with err naming the file
 * (a file changed or removed since the load, a bad dictionary, a code out
 * of range); the column then stays unread. */
int cat_column_use(CatTable *t, int col, CatError *err);
/* cat_column_use() for every column of t (before changing or writing it). */
int cat_table_use_all(CatTable *t, CatError *err);
/* 1 when column col of t holds its data: read (binary) or not from a file
 * read lazily; 0 for a binary column not used yet. */
int cat_column_loaded(const CatTable *t, int col);

/* Free a table and everything it owns (a table not, or no longer, in a
 * catalog); NULL is a no-op. */
void cat_table_free(CatTable *t);
/* Add t to cat, which then owns it. Returns 0, or -1 with err set when a
 * table of that name exists or memory runs out (t stays the caller's). */
int cat_catalog_add(Catalog *cat, CatTable *t, CatError *err);

/* Write table t as a binary-column folder (see above). */
int cat_write_binary(const CatTable *t, const char *dir, CatError *err);
/* Write column c (read, not stale, its stats current or not) as the files
 * dir/base.bin, .valid, .dict (or .dict0), .stats, each a new file renamed
 * over any old one. Returns 0, or -1 with err naming the file. */
int cat_write_column(const CatColumn *c, const char *dir, const char *base, CatError *err);

/* CREATE TABLE: an empty table. Error if the name exists. */
int cat_create_table(Catalog *cat, const char *name, int ncols, const char *const *col_names,
                     const CatType *col_types, CatError *err);

/* Set the precision and scale of t's DECIMAL columns from the arrays
 * (indexed by column; NULL: DECIMAL(18,3)). */
void cat_table_set_decimal(CatTable *t, const int *prec, const int *scale);

/* A literal value for INSERT. CAT_V_RAW: i is already the column's stored
 * value (DATE: days; DECIMAL: scaled at the column's own scale; other
 * types: an integer, as CAT_V_INT), for copying query results. */
typedef enum CatValueKind { CAT_V_NULL, CAT_V_INT, CAT_V_FLOAT, CAT_V_STR, CAT_V_RAW } CatValueKind;
typedef struct CatValue {
    CatValueKind kind;
    int64_t i;
    double f;
    const char *s; /* NUL-terminated */
} CatValue;

/* INSERT: append nrows rows (vals is row-major, nrows * t->ncols values),
 * converting each value to its column's type as SQLite would (int into
 * FLOAT64 widens, float into INT64 keeps the value if integral else error,
 * a number into STRING becomes its text, text into a number is an error
 * unless it parses entirely as one). All or nothing. Amortized O(nrows)
 * whatever the table's size: arrays grow geometrically, new strings are
 * appended to the dictionary through a hash index, and the table is left
 * `stale` (stats not recomputed; a string dictionary is unsorted when a new
 * string did not sort after every other) until cat_table_ready(). */
int cat_insert_rows(CatTable *t, int64_t nrows, const CatValue *vals, CatError *err);

/* Give t, empty, without indexes and without STRING columns, nrows rows
 * whose arrays come from the caller: data[c] (cat_host_alloc'd, nrows
 * values of column c's type as stored) and valid[c] (cat_host_alloc'd, one
 * byte per row, or NULL: no NULL); t owns them from then on. t becomes
 * stale (cat_table_ready computes its stats). For query results that
 * become tables: no value is converted. Returns 0, or -1 with err set and
 * nothing taken. */
int cat_table_adopt(CatTable *t, int64_t nrows, void **data, uint8_t **valid, CatError *err);

/* UPDATE: for each k < m, row rows[k] (ascending, distinct) takes the
 * values vals[k * nset + j] in columns cols[j] (j < nset, distinct),
 * converted as INSERT converts them. UNIQUE indexes are checked. All or
 * nothing: the changed columns are built beside the old ones and swapped
 * in at the end (their data / valid pointers change); the table is left
 * stale. Returns 0, or -1 with err set and t unchanged. */
int cat_update_rows(CatTable *t, int nset, const int *cols, int64_t m, const int64_t *rows,
                    const CatValue *vals, CatError *err);
/* DELETE: remove the rows r with del[r] != 0. All or nothing (every column
 * is rebuilt and swapped in; STRING dictionaries keep only the strings
 * still used). Returns 0, or -1 with err set and t unchanged. */
int cat_delete_rows(CatTable *t, const uint8_t *del, CatError *err);
/* DROP TABLE: remove and free the table named `name`. Returns 0, or -1
 * with err set when there is no such table. */
int cat_drop_table(Catalog *cat, const char *name, CatError *err);
/* The table holding the index named `name` (case-insensitive) and its
 * position in t->indexes, or NULL. */
CatTable *cat_find_index(const Catalog *cat, const char *name, int *which);
/* CREATE [UNIQUE] INDEX name ON t(cols): error when the name is taken by
 * a table or an index, or (unique) when the data has a duplicate key with
 * no NULL in it ("UNIQUE constraint failed: t.a"). Returns 0 or -1. */
int cat_create_index(Catalog *cat, CatTable *t, const char *name, int ncols, const int *cols,
                     int unique, CatError *err);
/* DROP INDEX name. Returns 0, or -1 with err set when there is none. */
int cat_drop_index(Catalog *cat, const char *name, CatError *err);

/* Make a stale table readable by queries: sort every unsorted string
 * dictionary (re-coding its column so codes are ranks again) and recompute
 * the stats. O(rows + distinct strings * log) when stale, O(1) otherwise;
 * the binder calls it for each table a query reads. Returns 0, or -1 when
 * out of memory (the table then stays stale; its contents are intact). */
int cat_table_ready(CatTable *t);

/* Recompute stats of every column of t. */
void cat_table_stats(CatTable *t);
/* 1 when s's min and max (doubles) hold every value of an integer column
 * exactly: no min/max (empty or all NULL), or both within +-2^53. Beyond
 * it INT64_MAX reads as 2^63, whose int64 conversion overflows. */
int cat_stats_exact(const CatStats *s);
/* 1 if the non-NULL values of c are all distinct, -1 if some value
 * repeats, 0 when it cannot tell (not an integer, DATE, DECIMAL or STRING
 * column; out of memory). The answer is kept in c->stats.unique until the
 * stats are recomputed; call on a ready table (cat_table_ready), whose
 * STRING codes are ranks. O(rows), or O(rows log rows) for sparse values. */
int cat_column_unique(CatColumn *c);
/* 1 if c (an INT32, INT64, DATE or DECIMAL column) has no NULL and its
 * values never decrease from one row to the next, -1 if not, 0 when it
 * cannot tell (another type, no data). Kept in c->stats.sorted like
 * cat_column_unique's answer. O(rows). Chunked execution cuts a second
 * table by the key range of each chunk when both join keys are sorted
 * (libgqp/chunk.c). */
int cat_column_sorted(CatColumn *c);

/* Host allocation for table data (64-byte aligned, zeroed). Free with
 * cat_host_free(). */
void *cat_host_alloc(size_t bytes);
void cat_host_free(void *p);

/* Parse 'yyyy-mm-dd' into days since 1970-01-01; -1 on malformed. */
int cat_parse_date(const char *s, size_t len, int32_t *days);
/* Text of a REAL the way SQLite prints it: `digits` significant digits
 * (15 for doubles), ".0" added when the text would read as an integer
 * ("2.0", "1.0e+20"), negative zero as "0.0". */
void cat_format_real(double f, int digits, char *buf, size_t cap);
/* Format days as yyyy-mm-dd into buf (>= 11 bytes). */
void cat_format_date(int32_t days, char *buf);
/* SQLite's CAST(text AS INTEGER): leading white space, an optional sign
 * and the longest run of decimal digits ("12abc" -> 12, "1.9" -> 1,
 * "1e3" -> 1); 0 when there is none; saturates at the int64 range. */
int64_t cat_text_to_int64(const char *s);
/* SQLite's CAST(text AS REAL): the longest prefix that reads as a decimal
 * real ([+-] digits [. digits] [e [+-] digits], white space first), else
 * 0.0 ("1.5x" -> 1.5, "1e" -> 1.0, "inf" and "0x10" -> 0.0, "1e400" ->
 * Inf). */
double cat_text_to_real(const char *s);

/*
 * Generate seed 004's table `test` (nrows rows, deterministic for seed) as
 * dir/test.csv with a header line, and dir/gqp.yaml declaring it. Columns:
 * id INT32 (0..n-1), uniformi INT32 uniform in [-99, 99], normali5 INT32
 * normal sigma 5 (rounded), normali20 INT32 sigma 20, uniformf FLOAT32 in
 * [-99, 99], normalf5 and normalf20 FLOAT32 normal sigma 5 / 20. Float values
 * are multiples of 1/1024 so that the CSV text is exact in float32 and in
 * SQLite's double. Uses all cores.
 */
int cat_gen_test(const char *dir, int64_t nrows, uint64_t seed, CatError *err);

/*
 * Generate the Star Schema Benchmark's tables (lineorder, customer,
 * supplier, part, ddate) at scale factor sf (0 < sf <= 1000, fractional
 * allowed), deterministic for seed and independent of the thread count,
 * under dir (created if missing): dir/<table>.tbl ('|'-delimited with a
 * trailing '|', as ssb-dbgen writes them), dir/bin/<table>/ binary-column
 * folders, dir/gqp.yaml declaring the tables from bin/ and dir/gqp-tbl.yaml
 * declaring them from the .tbl files. Keys, dates (YYYYMMDD), quantities and
 * money are INT32, text is STRING. Uses all cores. Returns 0, or -1 with err
 * set (files written before the error are left in place). flags:
 * CAT_GEN_NO_FACT_TBL leaves out lineorder.tbl and gqp-tbl.yaml (removing
 * old ones): at SF 100 the .tbl is 57 GB beside the 41 GB of binary columns.
 */
#define CAT_GEN_NO_FACT_TBL 1u
int cat_gen_ssb(const char *dir, double sf, uint64_t seed, unsigned flags, CatError *err);

/*
 * Load every table of the config in_path (catalog/convert.c), write each as
 * the binary-column folder <folder of out_path>/bin/<table>/ and write the
 * config out_path declaring them (format binary, the same names and types,
 * in the config's order); with append, add their entries to the end of
 * out_path (a config written by this function). All tables of in_path are
 * in memory at once. Returns 0, or -1 with err set (folders written before
 * the error are left).
 */
int cat_config_to_binary(const char *in_path, const char *out_path, int append, CatError *err);

/* Arrow import (load_arrow.c; the structs are in include/gqp_arrow.h). */
struct ArrowSchema;
struct ArrowArray;
/* Check that a table `name` could be made from record batches of schema
 * (a struct "+s" whose fields each have a name and a type gqp holds, no
 * name repeated) and, unless replace, that the name is free in cat.
 * Returns 0, or -1 with err naming the column at fault. */
int cat_arrow_check(const Catalog *cat, const char *name, const struct ArrowSchema *schema,
                    int replace, CatError *err);
/* Add a table `name` holding the rows of the nbatches record batches (struct
 * arrays of schema), copied (strings into a sorted dictionary); with
 * replace, a table of that name is dropped once the new one is complete.
 * Reads the batches, never releases them. All or nothing: returns 0, or -1
 * with err naming the column and row at fault and cat unchanged. */
int cat_load_arrow(Catalog *cat, const char *name, const struct ArrowSchema *schema,
                   struct ArrowArray *const *batches, int64_t nbatches, int replace, CatError *err);

#endif /* GQP_CATALOG_H */
