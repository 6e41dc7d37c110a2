/*
 * main.c -- the `gqp` command: run SQL scripts, explain plans and generate
 * the demo table. Uses only the public API in include/gqp.h; every piece of
 * logic the command needs beyond argument handling and printing lives in
 * libgqp.
 *
 *   gqp run [-c config.yaml] [--device auto|cpu|gpu] [--threads N]
 *           [--mode table|csv|json|markdown] [--timer] (FILE | -e SQL | -)
 *   gqp explain [-c config.yaml] [--device ...] [--threads N] [--analyze]
 *           [--format text|json|dot] (FILE | -e SQL | -)
 *   gqp gen test [--rows N] --out DIR [--seed S]
 *   gqp gen ssb --sf N --out DIR [--seed S]
 *   gqp gen tpch --sf N --out DIR [--float] [--keep-csv] [--duckdb FILE]
 *   gqp calibrate [--out FILE] [--threads N] [--max-rows N]
 *   gqp --version | --help
 *
 * Exit status: 0 on success, 1 on any error (message on stderr).
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* strdup, stat, clock_gettime */
#endif
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gqp.h"
#include "tpch_gen_py.h" /* TPCH_GEN_PY: cli/tpch_gen.py, built in by CMake */

#define GQP_CLI_VERSION "0.1.0"
/* Table mode shows at most this many rows: the first and last half. */
#define TABLE_MAX_ROWS 40

typedef enum OutMode { MODE_TABLE, MODE_CSV, MODE_JSON, MODE_MARKDOWN } OutMode;

/* Options shared by `run` and `explain`. */
typedef struct CliOpts {
    const char *config;  /* -c; NULL: resolved by resolve_config() */
    int is_db;           /* config came from --db */
    const char *device;  /* --device value or NULL */
    int threads;         /* --threads, -1 = not given */
    OutMode mode;        /* run --mode */
    int timer;           /* run --timer */
    int analyze;         /* explain --analyze */
    const char *format;  /* explain --format */
    const char *sql_arg; /* -e SQL */
    const char *file;    /* FILE or "-" */
} CliOpts;

/* Print the usage text to f. */
static void usage(FILE *f) {
    fputs("usage:\n"
          "  gqp run [-c config.yaml] [--device auto|cpu|gpu] [--threads N]\n"
          "          [--mode table|csv|json|markdown] [--timer] (FILE | -e SQL | -)\n"
          "  gqp explain [-c config.yaml] [--device auto|cpu|gpu] [--threads N] [--analyze]\n"
          "          [--format text|json|dot] (FILE | -e SQL | -)\n"
          "  gqp gen test [--rows N] --out DIR [--seed S]\n"
          "  gqp gen ssb --sf N --out DIR [--seed S]\n"
          "  gqp gen tpch --sf N --out DIR [--float] [--keep-csv] [--duckdb FILE]\n"
          "  gqp calibrate [--out FILE] [--threads N] [--max-rows N]\n"
          "  gqp import (-c config.yaml | FILE.csv) --db DIR [--table T]\n"
          "  gqp --version\n"
          "  gqp --help\n"
          "\n"
          "The config is -c, else $GQP_CONFIG, else ./gqp.yaml if it exists, else an\n"
          "empty catalog (CREATE TABLE / INSERT still work).\n"
          "-c DIR or --db DIR opens the database folder DIR (created when missing):\n"
          "tables, indexes and views created or changed there persist.\n",
          f);
}

/* Report a usage error (printf-style message) on stderr and return 1, the
 * exit status for errors. */
static int usage_error(const char *msg, const char *arg) {
    fprintf(stderr, "gqp: %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
    fputs("Try 'gqp --help'.\n", stderr);
    return 1;
}

/* Print msg to stderr, adding a newline if it lacks one. */
static void print_error(const char *msg) {
    size_t n = strlen(msg);
    fputs(msg, stderr);
    if (n == 0 || msg[n - 1] != '\n') fputc('\n', stderr);
}

/* Read all of stream f into a NUL-terminated malloc'd buffer (caller frees),
 * or NULL on read or allocation failure. */
static char *read_stream(FILE *f) {
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    if (!buf) return NULL;
    for (;;) {
        if (cap - len < 4096) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                return NULL;
            }
            buf = nb;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

/* The SQL text chosen by -e, FILE or "-" (stdin), malloc'd (caller frees).
 * NULL with a message on stderr when the file cannot be read. */
static char *load_sql(const CliOpts *o) {
    if (o->sql_arg) {
        char *s = strdup(o->sql_arg);
        if (!s) fputs("gqp: out of memory\n", stderr);
        return s;
    }
    if (strcmp(o->file, "-") == 0) {
        char *s = read_stream(stdin);
        if (!s) fputs("gqp: cannot read standard input\n", stderr);
        return s;
    }
    FILE *f = fopen(o->file, "rb");
    if (!f) {
        fprintf(stderr, "gqp: cannot open '%s': %s\n", o->file, strerror(errno));
        return NULL;
    }
    char *s = read_stream(f);
    fclose(f);
    if (!s) fprintf(stderr, "gqp: cannot read '%s'\n", o->file);
    return s;
}

/* The config path to open: -c, else $GQP_CONFIG, else ./gqp.yaml if it
 * exists, else NULL (empty catalog). The result is not owned by the caller. */
static const char *resolve_config(const CliOpts *o) {
    struct stat sb;
    if (o->config) return o->config;
    const char *env = getenv("GQP_CONFIG");
    if (env && *env) return env;
    if (stat("gqp.yaml", &sb) == 0) return "gqp.yaml";
    return NULL;
}

/* The path gqp_open() takes as the database folder `dir` (--db): dir with
 * a '/' added, so that a name ending in .yaml is a folder too. */
static const char *db_folder(const char *dir) {
    static char buf[4096];
    size_t n = strlen(dir);
    if (n == 0 || dir[n - 1] == '/' || n + 2 > sizeof buf) return dir;
    memcpy(buf, dir, n);
    memcpy(buf + n, "/", 2);
    return buf;
}

/* Open the database with the options' config, device and threads. Returns
 * the handle, or NULL after printing the error (the handle is closed). */
static gqp *open_db(const CliOpts *o) {
    const char *cfg = resolve_config(o);
    gqp *db = NULL;
    struct stat sb;
    /* a missing path names a new database folder unless it ends in
     * .yaml / .yml (docs/storage.md) */
    size_t cl = cfg ? strlen(cfg) : 0;
    int yaml = cl >= 5 ? strcmp(cfg + cl - 5, ".yaml") == 0 : 0;
    yaml |= cl >= 4 ? strcmp(cfg + cl - 4, ".yml") == 0 : 0;
    if (cfg && !o->is_db && yaml && stat(cfg, &sb) != 0) {
        fprintf(stderr, "Catalog Error: cannot open config '%s': %s\n", cfg, strerror(errno));
        return NULL;
    }
    int rc = gqp_open(o->is_db ? db_folder(cfg) : cfg, &db);
    if (!db) {
        fputs("gqp: out of memory opening the database\n", stderr);
        return NULL;
    }
    if (rc != GQP_OK) {
        print_error(gqp_errmsg(db));
        gqp_close(db);
        return NULL;
    }
    if (o->device) {
        gqp_device dev;
        if (strcmp(o->device, "auto") == 0)
            dev = GQP_DEVICE_AUTO;
        else if (strcmp(o->device, "cpu") == 0)
            dev = GQP_DEVICE_CPU;
        else
            dev = GQP_DEVICE_GPU;
        if (gqp_set_device(db, dev) != GQP_OK) {
            const char *m = gqp_errmsg(db);
            if (strcmp(m, "not an error") == 0)
                m = "Device Error: --device gpu: no usable CUDA device";
            print_error(m);
            gqp_close(db);
            return NULL;
        }
    }
    if (o->threads >= 0 && gqp_set_threads(db, o->threads) != GQP_OK) {
        print_error(gqp_errmsg(db));
        gqp_close(db);
        return NULL;
    }
    return db;
}

/* 1 if values of type t are numbers (right-aligned, unquoted in JSON). */
static int type_is_numeric(gqp_type t) {
    return t == GQP_TYPE_INT32 || t == GQP_TYPE_INT64 || t == GQP_TYPE_FLOAT32 ||
           t == GQP_TYPE_FLOAT64 || t == GQP_TYPE_DECIMAL;
}

/* Lower-case display name of a result type for the table header. */
static const char *type_label(gqp_type t) {
    switch (t) {
    case GQP_TYPE_NULL:
        return "null";
    case GQP_TYPE_INT32:
        return "int32";
    case GQP_TYPE_INT64:
        return "int64";
    case GQP_TYPE_FLOAT32:
        return "float";
    case GQP_TYPE_FLOAT64:
        return "double";
    case GQP_TYPE_DATE:
        return "date";
    case GQP_TYPE_BOOL:
        return "boolean";
    case GQP_TYPE_STRING:
        return "varchar";
    case GQP_TYPE_DECIMAL:
        return "decimal";
    }
    return "?";
}

/* Display width of UTF-8 text s: the number of code points. */
static size_t utf8_width(const char *s) {
    size_t w = 0;
    for (; *s; s++)
        if (((unsigned char)*s & 0xC0) != 0x80) w++;
    return w;
}

/* Print n copies of the UTF-8 string s. */
static void repeat(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++)
        fputs(s, stdout);
}

/* ---- table mode ---- */

/* One buffered row: ncols malloc'd strings, NULL for SQL NULL. */
typedef struct RowBuf {
    char **v;
} RowBuf;

/* Copy the current row of st into a new RowBuf (NULL entries for SQL NULL).
 * Returns 0, or -1 on allocation failure. */
static int row_capture(gqp_stmt *st, int ncols, RowBuf *r) {
    r->v = calloc((size_t)ncols, sizeof(char *));
    if (!r->v) return -1;
    for (int c = 0; c < ncols; c++) {
        const char *t = gqp_column_text(st, c);
        if (t && !(r->v[c] = strdup(t))) return -1;
    }
    return 0;
}

/* Free the strings of r (r itself belongs to the caller). */
static void row_free(RowBuf *r, int ncols) {
    if (!r->v) return;
    for (int c = 0; c < ncols; c++)
        free(r->v[c]);
    free(r->v);
    r->v = NULL;
}

/* Print text s padded to width w: right-aligned if right, else left. */
static void print_cell(const char *s, size_t w, int right) {
    size_t sw = utf8_width(s);
    if (right) repeat(" ", w - sw);
    fputs(s, stdout);
    if (!right) repeat(" ", w - sw);
}

/* Print text s centered in width w. */
static void print_centered(const char *s, size_t w) {
    size_t sw = utf8_width(s), left = (w - sw) / 2;
    repeat(" ", left);
    fputs(s, stdout);
    repeat(" ", w - sw - left);
}

/* Print a horizontal box rule with the given corner/junction glyphs. */
static void table_rule(const size_t *w, int ncols, const char *l, const char *m, const char *r) {
    fputs(l, stdout);
    for (int c = 0; c < ncols; c++) {
        repeat("─", w[c] + 2);
        fputs(c + 1 < ncols ? m : r, stdout);
    }
    fputc('\n', stdout);
}

/* Print one data row of the box. */
static void table_row(const RowBuf *row, const size_t *w, const gqp_type *types, int ncols) {
    fputs("│", stdout);
    for (int c = 0; c < ncols; c++) {
        fputc(' ', stdout);
        print_cell(row->v[c] ? row->v[c] : "NULL", w[c], type_is_numeric(types[c]));
        fputs(" │", stdout);
    }
    fputc('\n', stdout);
}

/* Print the ellipsis row that stands for rows left out. */
static void table_ellipsis(const size_t *w, int ncols) {
    fputs("│", stdout);
    for (int c = 0; c < ncols; c++) {
        fputc(' ', stdout);
        print_centered("·", w[c]);
        fputs(" │", stdout);
    }
    fputc('\n', stdout);
}

/* Step st to the end and print its rows as a DuckDB-like box with names and
 * types; more than TABLE_MAX_ROWS rows show the first and last half and a
 * count line. Returns the gqp_step code that ended the loop (GQP_DONE on
 * success), or GQP_NOMEM. */
static int print_table(gqp_stmt *st, int ncols) {
    enum { HALF = TABLE_MAX_ROWS / 2 };
    RowBuf head[HALF], tail[HALF];
    int64_t nrows = 0;
    int rc;
    memset(head, 0, sizeof head);
    memset(tail, 0, sizeof tail);
    while ((rc = gqp_step(st)) == GQP_ROW) {
        RowBuf *slot;
        if (nrows < HALF) {
            slot = &head[nrows];
        } else {
            slot = &tail[(nrows - HALF) % HALF];
            row_free(slot, ncols);
        }
        if (row_capture(st, ncols, slot) != 0) {
            rc = GQP_NOMEM;
            break;
        }
        nrows++;
    }
    if (rc == GQP_DONE) {
        size_t *w = calloc((size_t)ncols, sizeof *w);
        gqp_type *types = calloc((size_t)ncols, sizeof *types);
        int64_t nhead = nrows < HALF ? nrows : HALF;
        int64_t ntail = nrows - nhead;
        int64_t skipped = 0;
        if (ntail > HALF) {
            skipped = ntail - HALF;
            ntail = HALF;
        }
        if (!w || !types) {
            rc = GQP_NOMEM;
        } else {
            for (int c = 0; c < ncols; c++) {
                types[c] = gqp_column_type(st, c);
                w[c] = utf8_width(gqp_column_name(st, c));
                size_t tw = utf8_width(type_label(types[c]));
                if (tw > w[c]) w[c] = tw;
            }
            /* The tail ring holds rows HALF.. in slots (i - HALF) % HALF. */
            int64_t first_tail = nrows - ntail;
            for (int64_t i = 0; i < nhead + ntail; i++) {
                RowBuf *r = i < nhead ? &head[i] : &tail[(first_tail + i - nhead - HALF) % HALF];
                for (int c = 0; c < ncols; c++) {
                    size_t vw = utf8_width(r->v[c] ? r->v[c] : "NULL");
                    if (vw > w[c]) w[c] = vw;
                }
            }
            table_rule(w, ncols, "┌", "┬", "┐");
            fputs("│", stdout);
            for (int c = 0; c < ncols; c++) {
                fputc(' ', stdout);
                print_centered(gqp_column_name(st, c), w[c]);
                fputs(" │", stdout);
            }
            fputs("\n│", stdout);
            for (int c = 0; c < ncols; c++) {
                fputc(' ', stdout);
                print_centered(type_label(types[c]), w[c]);
                fputs(" │", stdout);
            }
            fputc('\n', stdout);
            table_rule(w, ncols, "├", "┼", "┤");
            for (int64_t i = 0; i < nhead; i++)
                table_row(&head[i], w, types, ncols);
            if (skipped > 0) table_ellipsis(w, ncols);
            for (int64_t i = 0; i < ntail; i++)
                table_row(&tail[(first_tail + i - HALF) % HALF], w, types, ncols);
            table_rule(w, ncols, "└", "┴", "┘");
            if (skipped > 0) printf("%" PRId64 " rows (%d shown)\n", nrows, TABLE_MAX_ROWS);
        }
        free(w);
        free(types);
    }
    for (int i = 0; i < HALF; i++) {
        row_free(&head[i], ncols);
        row_free(&tail[i], ncols);
    }
    return rc;
}

/* ---- csv / json / markdown ---- */

/* Print s as a CSV field, quoted when it holds a comma, quote, CR, LF or
 * leading/trailing space. */
static void csv_field(const char *s) {
    size_t n = strlen(s);
    int quote = n > 0 && (s[0] == ' ' || s[n - 1] == ' ');
    if (strpbrk(s, ",\"\r\n")) quote = 1;
    if (!quote) {
        fputs(s, stdout);
        return;
    }
    fputc('"', stdout);
    for (; *s; s++) {
        if (*s == '"') fputc('"', stdout);
        fputc(*s, stdout);
    }
    fputc('"', stdout);
}

/* Print s as a JSON string literal with escapes. */
static void json_string(const char *s) {
    fputc('"', stdout);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", stdout);
        else if (ch == '\r')
            fputs("\\r", stdout);
        else if (ch == '\t')
            fputs("\\t", stdout);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            fputc(ch, stdout);
    }
    fputc('"', stdout);
}

/* Print column c of the current row as a JSON value. */
static void json_value(gqp_stmt *st, int c, gqp_type t) {
    const char *s = gqp_column_text(st, c);
    if (!s || gqp_column_is_null(st, c)) {
        fputs("null", stdout);
    } else if (t == GQP_TYPE_BOOL) {
        fputs(gqp_column_int64(st, c) ? "true" : "false", stdout);
    } else if (type_is_numeric(t)) {
        double d = gqp_column_double(st, c);
        fputs(isfinite(d) ? s : "null", stdout);
    } else {
        json_string(s);
    }
}

/* Print s as a markdown cell, escaping '|'. */
static void md_text(const char *s) {
    for (; *s; s++) {
        if (*s == '|') fputc('\\', stdout);
        fputc(*s, stdout);
    }
}

/* Step st to the end printing rows in mode (csv, json or markdown). Returns
 * the gqp_step code that ended the loop (GQP_DONE on success). */
static int print_stream(gqp_stmt *st, int ncols, OutMode mode) {
    int rc;
    int64_t nrows = 0;
    if (mode == MODE_CSV) {
        for (int c = 0; c < ncols; c++) {
            if (c) fputc(',', stdout);
            csv_field(gqp_column_name(st, c));
        }
        fputc('\n', stdout);
    } else if (mode == MODE_MARKDOWN) {
        fputc('|', stdout);
        for (int c = 0; c < ncols; c++) {
            fputc(' ', stdout);
            md_text(gqp_column_name(st, c));
            fputs(" |", stdout);
        }
        fputs("\n|", stdout);
        for (int c = 0; c < ncols; c++)
            fputs(type_is_numeric(gqp_column_type(st, c)) ? "---:|" : "---|", stdout);
        fputc('\n', stdout);
    } else {
        fputc('[', stdout);
    }
    while ((rc = gqp_step(st)) == GQP_ROW) {
        if (mode == MODE_JSON)
            fputs(nrows ? ",\n{" : "\n{", stdout);
        else if (mode == MODE_MARKDOWN)
            fputc('|', stdout);
        for (int c = 0; c < ncols; c++) {
            const char *s = gqp_column_text(st, c);
            if (mode == MODE_CSV) {
                if (c) fputc(',', stdout);
                if (s) csv_field(s);
            } else if (mode == MODE_MARKDOWN) {
                fputc(' ', stdout);
                md_text(s ? s : "NULL");
                fputs(" |", stdout);
            } else {
                if (c) fputc(',', stdout);
                json_string(gqp_column_name(st, c));
                fputc(':', stdout);
                json_value(st, c, gqp_column_type(st, c));
            }
        }
        if (mode == MODE_JSON)
            fputc('}', stdout);
        else
            fputc('\n', stdout);
        nrows++;
    }
    if (mode == MODE_JSON) fputs(nrows ? "\n]\n" : "]\n", stdout);
    return rc;
}

/* ---- subcommands ---- */

/* Parse the options of `run` / `explain` from argv[first..argc) into o.
 * Returns 0, or 1 after printing a usage error. */
static int parse_opts(int argc, char **argv, int first, int is_run, CliOpts *o) {
    memset(o, 0, sizeof *o);
    o->threads = -1;
    o->mode = MODE_TABLE;
    o->format = "text";
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-c") == 0 || strcmp(a, "--config") == 0 || strcmp(a, "--db") == 0) {
            if (!v) return usage_error("missing value for", a);
            o->config = v;
            o->is_db = a[1] == '-' && a[2] == 'd'; /* --db: a database folder */
            i++;
        } else if (strcmp(a, "--device") == 0) {
            if (!v || (strcmp(v, "auto") && strcmp(v, "cpu") && strcmp(v, "gpu")))
                return usage_error("--device needs auto, cpu or gpu, got", v ? v : "nothing");
            o->device = v;
            i++;
        } else if (strcmp(a, "--threads") == 0) {
            char *end;
            if (!v) return usage_error("missing value for", a);
            long n = strtol(v, &end, 10);
            if (*end || end == v || n < 0 || n > 4096)
                return usage_error("--threads needs a count >= 0, got", v);
            o->threads = (int)n;
            i++;
        } else if (strcmp(a, "-e") == 0) {
            if (!v) return usage_error("missing SQL after", a);
            if (o->sql_arg || o->file) return usage_error("give one of FILE, -e SQL or -", NULL);
            o->sql_arg = v;
            i++;
        } else if (is_run && strcmp(a, "--mode") == 0) {
            if (!v) return usage_error("missing value for", a);
            if (strcmp(v, "table") == 0)
                o->mode = MODE_TABLE;
            else if (strcmp(v, "csv") == 0)
                o->mode = MODE_CSV;
            else if (strcmp(v, "json") == 0)
                o->mode = MODE_JSON;
            else if (strcmp(v, "markdown") == 0)
                o->mode = MODE_MARKDOWN;
            else
                return usage_error("--mode needs table, csv, json or markdown, got", v);
            i++;
        } else if (is_run && strcmp(a, "--timer") == 0) {
            o->timer = 1;
        } else if (!is_run && strcmp(a, "--analyze") == 0) {
            o->analyze = 1;
        } else if (!is_run && strcmp(a, "--format") == 0) {
            if (!v || (strcmp(v, "text") && strcmp(v, "json") && strcmp(v, "dot")))
                return usage_error("--format needs text, json or dot, got", v ? v : "nothing");
            o->format = v;
            i++;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("unknown option", a);
        } else {
            if (o->sql_arg || o->file) return usage_error("give one of FILE, -e SQL or -", NULL);
            o->file = a;
        }
    }
    if (!o->sql_arg && !o->file) return usage_error("no SQL given: FILE, -e SQL or -", NULL);
    return 0;
}

/* `gqp run`: execute every statement of the script in turn, printing query
 * results. Stops at the first error. Returns the exit status. */
static int cmd_run(int argc, char **argv) {
    CliOpts o;
    if (parse_opts(argc, argv, 2, 1, &o)) return 1;
    char *sql = load_sql(&o);
    if (!sql) return 1;
    gqp *db = open_db(&o);
    if (!db) {
        free(sql);
        return 1;
    }
    int status = 0;
    const char *p = sql;
    const char *end = sql + strlen(sql); /* once: -1 would make each prepare scan the rest */
    while (*p) {
        gqp_stmt *st = NULL;
        const char *tail = NULL;
        if (gqp_prepare(db, p, (int64_t)(end - p), &st, &tail) != GQP_OK) {
            print_error(gqp_errmsg(db));
            status = 1;
            break;
        }
        if (!st) break;
        int ncols = gqp_column_count(st);
        int rc;
        if (ncols > 0) {
            rc = o.mode == MODE_TABLE ? print_table(st, ncols) : print_stream(st, ncols, o.mode);
        } else {
            while ((rc = gqp_step(st)) == GQP_ROW)
                ;
        }
        fflush(stdout);
        if (rc != GQP_DONE) {
            print_error(rc == GQP_NOMEM ? "gqp: out of memory" : gqp_errmsg(db));
            gqp_finalize(st);
            status = 1;
            break;
        }
        if (o.timer) fprintf(stderr, "Run Time: %.3f ms\n", gqp_exec_ms(st));
        gqp_finalize(st);
        if (!tail || tail <= p) break;
        p = tail;
    }
    gqp_close(db);
    free(sql);
    return status;
}

/* `gqp explain`: print the placed DAG of the first statement. Returns the
 * exit status. */
static int cmd_explain(int argc, char **argv) {
    CliOpts o;
    if (parse_opts(argc, argv, 2, 0, &o)) return 1;
    char *sql = load_sql(&o);
    if (!sql) return 1;
    gqp *db = open_db(&o);
    if (!db) {
        free(sql);
        return 1;
    }
    /* which cost model placed the nodes (stderr, so stdout stays the plan) */
    fprintf(stderr, "cost model: %s\n", gqp_cost_model(db));
    int flags = o.analyze ? GQP_EXPLAIN_ANALYZE : 0;
    if (strcmp(o.format, "json") == 0)
        flags |= GQP_EXPLAIN_JSON;
    else if (strcmp(o.format, "dot") == 0)
        flags |= GQP_EXPLAIN_DOT;
    char *out = NULL;
    int status = 0;
    if (gqp_explain(db, sql, -1, flags, &out) != GQP_OK) {
        print_error(gqp_errmsg(db));
        status = 1;
    } else if (out) {
        size_t n = strlen(out);
        fputs(out, stdout);
        if (n == 0 || out[n - 1] != '\n') fputc('\n', stdout);
    }
    gqp_free(out);
    gqp_close(db);
    free(sql);
    return status;
}

/* Parse a non-negative 64-bit decimal integer; 0 on success, -1 if s is not
 * one. */
static int parse_u64(const char *s, uint64_t *out) {
    char *end;
    if (!s || !*s || *s == '-') return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno) return -1;
    *out = (uint64_t)v;
    return 0;
}

/* `gqp calibrate`: measure the primitives and transfers of this machine
 * and write the cost model (default configs/cost-local.yaml). Returns the
 * exit status. */
static int cmd_calibrate(int argc, char **argv) {
    const char *out = "configs/cost-local.yaml";
    uint64_t threads = 0, max_rows = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--out") == 0) {
            if (!v) return usage_error("missing value for", a);
            out = v;
        } else if (strcmp(a, "--threads") == 0) {
            if (parse_u64(v, &threads) != 0 || threads > 4096)
                return usage_error("--threads needs a count >= 0, got", v ? v : "nothing");
        } else if (strcmp(a, "--max-rows") == 0) {
            if (parse_u64(v, &max_rows) != 0 || max_rows < 1000 || max_rows > (uint64_t)INT64_MAX)
                return usage_error("--max-rows needs a row count >= 1000, got", v ? v : "nothing");
        } else {
            return usage_error("unknown option", a);
        }
        i++;
    }
    fprintf(stderr, "calibrating (GPU %s); this takes a while...\n",
            gqp_gpu_available() ? "available" : "not available: CPU only");
    char *err = NULL;
    if (gqp_calibrate_ex(out, (int)threads, (int64_t)max_rows, &err) != GQP_OK) {
        print_error(err ? err : "gqp: calibrate failed");
        gqp_free(err);
        return 1;
    }
    printf("wrote %s\n", out);
    return 0;
}

/* `gqp gen ssb`: write the Star Schema Benchmark's tables (.tbl, binary
 * folders, gqp.yaml, gqp-tbl.yaml) at --sf N. Returns the exit status. */
static int cmd_gen_ssb(int argc, char **argv) {
    uint64_t seed = 1;
    double sf = -1;
    const char *dir = NULL;
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--sf") == 0) {
            char *end = NULL;
            sf = v ? strtod(v, &end) : -1;
            if (!v || !*v || *end || !(sf > 0))
                return usage_error("--sf needs a positive scale factor, got", v ? v : "nothing");
        } else if (strcmp(a, "--seed") == 0) {
            if (parse_u64(v, &seed) != 0)
                return usage_error("--seed needs a number, got", v ? v : "nothing");
        } else if (strcmp(a, "--out") == 0) {
            if (!v) return usage_error("missing value for", a);
            dir = v;
        } else {
            return usage_error("unknown option", a);
        }
        i++;
    }
    if (sf < 0) return usage_error("gen ssb needs --sf N", NULL);
    if (!dir) return usage_error("gen ssb needs --out DIR", NULL);
    char *err = NULL;
    if (gqp_gen_ssb(dir, sf, seed, &err) != GQP_OK) {
        print_error(err ? err : "gqp: gen ssb failed");
        gqp_free(err);
        return 1;
    }
    printf("wrote SSB SF %g (seed %" PRIu64 ") to %s: *.tbl, bin/, gqp.yaml, gqp-tbl.yaml\n", sf,
           seed, dir);
    return 0;
}

#define TPCH_NEED                                                                                  \
    "Error: gqp gen tpch needs python3 with duckdb==1.5.5 and duckdb-extension-tpch==1.5.5 "       \
    "(pip install duckdb==1.5.5 duckdb-extension-tpch==1.5.5)"

/* `gqp gen tpch`: the eight TPC-H tables at --sf N from DuckDB's tpch
 * extension (the real dbgen): runs the built-in cli/tpch_gen.py with
 * $GQP_PYTHON (default python3), which writes DIR/csv/<table>.csv with
 * DIR/csv/<table>.yaml one table at a time and names each on its stdout;
 * gqp then writes DIR/bin/<table>/ and DIR/gqp.yaml through
 * gqp_config_to_binary() and, without --keep-csv, removes that CSV before
 * answering, so at most one table's text is on disk at a time.
 * The money columns are DECIMAL(15,2) as in TPC-H; --float (or
 * GQP_TPCH_DECIMAL=0) declares them FLOAT64 instead (--decimal is the
 * default, kept for scripts); --duckdb FILE keeps DuckDB's database.
 * Returns the exit status. */
static int cmd_gen_tpch(int argc, char **argv) {
    const char *dir = NULL, *sf = NULL, *duck = NULL;
    const char *env = getenv("GQP_TPCH_DECIMAL");
    int decimal = !(env && strcmp(env, "0") == 0), keep_csv = 0;
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--decimal") == 0 || strcmp(a, "--float") == 0) {
            decimal = strcmp(a, "--decimal") == 0;
            continue;
        }
        if (strcmp(a, "--keep-csv") == 0) {
            keep_csv = 1;
            continue;
        }
        if (strcmp(a, "--sf") == 0) {
            char *end = NULL;
            double x = v ? strtod(v, &end) : -1;
            if (!v || !*v || *end || !(x > 0) || x > 1000)
                return usage_error("--sf needs a scale factor in (0, 1000], got",
                                   v ? v : "nothing");
            sf = v;
        } else if (strcmp(a, "--out") == 0) {
            if (!v) return usage_error("missing value for", a);
            dir = v;
        } else if (strcmp(a, "--duckdb") == 0) {
            if (!v) return usage_error("missing value for", a);
            duck = v;
        } else {
            return usage_error("unknown option", a);
        }
        i++;
    }
    if (!sf) return usage_error("gen tpch needs --sf N", NULL);
    if (!dir) return usage_error("gen tpch needs --out DIR", NULL);
    const char *py = getenv("GQP_PYTHON");
    if (!py || !py[0]) py = "python3";
    const char *args[13];
    int n = 0;
    args[n++] = py;
    args[n++] = "-c";
    args[n++] = (const char *)TPCH_GEN_PY;
    args[n++] = "--handshake";
    args[n++] = "--sf";
    args[n++] = sf;
    args[n++] = "--out";
    args[n++] = dir;
    if (decimal) args[n++] = "--decimal";
    if (duck) {
        args[n++] = "--duckdb";
        args[n++] = duck;
    }
    args[n] = NULL;
    size_t dl = strlen(dir) + 64;
    char *path = malloc(dl), *bincfg = malloc(dl);
    int down[2] = {-1, -1}, up[2] = {-1, -1}; /* gqp -> script, script -> gqp */
    if (!path || !bincfg || pipe(down) != 0 || pipe(up) != 0) {
        fprintf(stderr, "gqp: gen tpch: %s\n", path && bincfg ? strerror(errno) : "out of memory");
        free(path);
        free(bincfg);
        return 1;
    }
    snprintf(bincfg, dl, "%s/gqp.yaml", dir);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "gqp: gen tpch: fork failed: %s\n", strerror(errno));
        free(path);
        free(bincfg);
        return 1;
    }
    if (pid == 0) {
        dup2(down[0], 0);
        dup2(up[1], 1);
        close(down[0]);
        close(down[1]);
        close(up[0]);
        close(up[1]);
        execvp(py, (char *const *)args);
        _exit(127);
    }
    close(down[0]);
    close(up[1]);
    signal(SIGPIPE, SIG_IGN); /* a script that died is seen by its exit status */
    FILE *from = fdopen(up[0], "r"), *to = fdopen(down[1], "w");
    /* the script names each table it has written (lineitem first); that
     * table is converted and its CSV removed before the next is written */
    static const char *const tables[] = {"lineitem", "orders",   "customer", "part",
                                         "partsupp", "supplier", "nation",   "region"};
    int ndone = 0, rc = (from && to) ? GQP_OK : GQP_ERROR;
    char line[64];
    while (rc == GQP_OK && fgets(line, sizeof line, from)) {
        line[strcspn(line, "\r\n")] = 0;
        int known = 0;
        for (int t = 0; t < 8; t++)
            known |= strcmp(line, tables[t]) == 0;
        if (!known || ndone >= 8) {
            fprintf(stderr, "gqp: gen tpch: unexpected line from the generator: %s\n", line);
            rc = GQP_ERROR;
            break;
        }
        snprintf(path, dl, "%s/csv/%s.yaml", dir, line);
        char *err = NULL;
        rc = gqp_config_to_binary(path, bincfg, ndone > 0, &err);
        if (rc != GQP_OK) print_error(err ? err : "gqp: gen tpch: writing binary columns failed");
        gqp_free(err);
        if (rc != GQP_OK) break;
        ndone++;
        if (!keep_csv) {
            remove(path);
            snprintf(path, dl, "%s/csv/%s.csv", dir, line);
            remove(path);
        }
        if (fputs("ok\n", to) < 0 || fflush(to) != 0) rc = GQP_ERROR;
    }
    /* closing the pipes ends a script still waiting for an answer */
    if (to)
        fclose(to);
    else
        close(down[1]);
    if (from)
        fclose(from);
    else
        close(up[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "gqp: gen tpch: waitpid failed: %s\n", strerror(errno));
            status = 1 << 8;
            break;
        }
    signal(SIGPIPE, SIG_DFL);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    if (rc == GQP_OK && code == 127) {
        fprintf(stderr, "%s [cannot run %s]\n", TPCH_NEED, py);
        rc = GQP_ERROR;
    } else if (rc == GQP_OK && code == 3) {
        rc = GQP_ERROR; /* the script printed TPCH_NEED */
    } else if (rc == GQP_OK && (code != 0 || ndone != 8)) {
        fprintf(stderr,
                "gqp: gen tpch: %s (the generator script) failed with status %d after %d of 8 "
                "tables\n",
                py, code, ndone);
        rc = GQP_ERROR;
    }
    if (rc == GQP_OK && !keep_csv) {
        snprintf(path, dl, "%s/gqp-csv.yaml", dir);
        remove(path);
        snprintf(path, dl, "%s/csv", dir);
        rmdir(path);
    }
    if (rc == GQP_OK)
        printf("wrote TPC-H SF %s (DuckDB's dbgen) to %s: bin/, gqp.yaml%s%s%s\n", sf, dir,
               keep_csv ? ", csv/, gqp-csv.yaml" : "", duck ? ", " : "", duck ? duck : "");
    free(path);
    free(bincfg);
    return rc == GQP_OK ? 0 : 1;
}

/* `gqp gen test`: write seed 004's demo table and its config (`gqp gen ssb`
 * goes to cmd_gen_ssb, `gqp gen tpch` to cmd_gen_tpch). Returns the exit
 * status. */
static int cmd_gen(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[2], "ssb") == 0) return cmd_gen_ssb(argc, argv);
    if (argc >= 3 && strcmp(argv[2], "tpch") == 0) return cmd_gen_tpch(argc, argv);
    uint64_t rows = 1000000, seed = 4;
    const char *dir = NULL;
    if (argc < 3 || strcmp(argv[2], "test") != 0)
        return usage_error(
            "gen knows: gen test --out DIR | gen ssb --sf N --out DIR | gen tpch --sf N --out DIR",
            NULL);
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--rows") == 0) {
            if (parse_u64(v, &rows) != 0 || rows > (uint64_t)INT64_MAX)
                return usage_error("--rows needs a row count, got", v ? v : "nothing");
        } else if (strcmp(a, "--seed") == 0) {
            if (parse_u64(v, &seed) != 0)
                return usage_error("--seed needs a number, got", v ? v : "nothing");
        } else if (strcmp(a, "--out") == 0) {
            if (!v) return usage_error("missing value for", a);
            dir = v;
        } else {
            return usage_error("unknown option", a);
        }
        i++;
    }
    if (!dir) return usage_error("gen test needs --out DIR", NULL);
    char *err = NULL;
    if (gqp_gen_test(dir, (int64_t)rows, seed, &err) != GQP_OK) {
        print_error(err ? err : "gqp: gen test failed");
        gqp_free(err);
        return 1;
    }
    printf("wrote %s/test.csv (%" PRIu64 " rows, seed %" PRIu64 ") and %s/gqp.yaml\n", dir, rows,
           seed, dir);
    return 0;
}

/* gqp_import's progress: a line on stderr, rewritten in place on a
 * terminal. */
static void import_progress(void *ud, const char *line) {
    int *tty = ud;
    if (*tty)
        fprintf(stderr, "\r\033[K%s", line);
    else
        fprintf(stderr, "%s\n", line);
    fflush(stderr);
}

/* `gqp import (-c config.yaml | FILE) --db DIR [--table T]`: tables into
 * the database folder DIR. Returns the exit status. */
static int cmd_import(int argc, char **argv) {
    const char *src = NULL, *dir = NULL, *table = NULL;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-c") == 0 || strcmp(a, "--config") == 0 || strcmp(a, "--db") == 0 ||
            strcmp(a, "--table") == 0) {
            if (!v) return usage_error("missing value for", a);
            if (a[2] == 'd')
                dir = v;
            else if (a[2] == 't')
                table = v;
            else if (src)
                return usage_error("give one source: -c config.yaml or FILE", NULL);
            else
                src = v;
            i++;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("unknown option", a);
        } else {
            if (src) return usage_error("give one source: -c config.yaml or FILE", NULL);
            src = a;
        }
    }
    if (!src) return usage_error("import needs a source: -c config.yaml or FILE", NULL);
    if (!dir) return usage_error("import needs --db DIR", NULL);
    gqp *db = NULL;
    int rc = gqp_open(db_folder(dir), &db);
    if (!db) {
        fputs("gqp: out of memory opening the database\n", stderr);
        return 1;
    }
    int tty = isatty(2);
    if (rc == GQP_OK) rc = gqp_import(db, src, table, import_progress, &tty);
    if (tty) fputc('\n', stderr);
    if (rc != GQP_OK) print_error(gqp_errmsg(db));
    gqp_close(db);
    return rc == GQP_OK ? 0 : 1;
}

/* Dispatch on the subcommand. Returns the process exit status. */
int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return 1;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("gqp %s (libgqp %s, GPU %s)\n", GQP_CLI_VERSION, gqp_libversion(),
               gqp_gpu_available() ? "available" : "not available");
        return 0;
    }
    if (strcmp(cmd, "run") == 0) return cmd_run(argc, argv);
    if (strcmp(cmd, "explain") == 0) return cmd_explain(argc, argv);
    if (strcmp(cmd, "gen") == 0) return cmd_gen(argc, argv);
    if (strcmp(cmd, "calibrate") == 0) return cmd_calibrate(argc, argv);
    if (strcmp(cmd, "import") == 0) return cmd_import(argc, argv);
    return usage_error("unknown command", cmd);
}
