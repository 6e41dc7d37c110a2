/*
 * main.c -- the `gqp` command: run SQL scripts, explain plans and generate
 * the demo table. Uses only the public API in include/gqp.h; every piece of
 * logic the command needs beyond argument handling and printing lives in
 * libgqp.
 *
 *   gqp [DB] | gqp shell [-c config.yaml] [--device ...] [--threads N]
 *           [--mode ...] [--timer] [DB]       (the shell: cli/shell.c)
 *   gqp run [-c config.yaml] [--device auto|cpu|gpu] [--threads N]
 *           [--mode table|csv|json|markdown|line] [--timer] (FILE | -e SQL | -)
 *   gqp explain [-c config.yaml] [--device ...] [--threads N] [--analyze]
 *           [--format text|json|dot] (FILE | -e SQL | -)
 *   gqp gen test [--rows N] --out DIR [--seed S]
 *   gqp gen ssb --sf N --out DIR [--seed S] [--no-lineorder-tbl]
 *   gqp gen tpch --sf N --out DIR [--float] [--keep-csv] [--duckdb FILE] [--jobs N]
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
#include "output.h"      /* result printers, out_exec */
#include "shell.h"       /* the interactive shell, statement-by-statement stdin */
#include "tpch_gen_py.h" /* TPCH_GEN_PY: cli/tpch_gen.py, built in by CMake */

#define GQP_CLI_VERSION "0.1.0"

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
          "  gqp [DB]                      the interactive shell (DB: a config.yaml)\n"
          "  gqp shell [-c config.yaml] [--device auto|cpu|gpu] [--threads N]\n"
          "          [--mode table|csv|json|markdown|line] [--timer] [DB]\n"
          "  gqp run [-c config.yaml] [--device auto|cpu|gpu] [--threads N]\n"
          "          [--mode table|csv|json|markdown|line] [--timer] (FILE | -e SQL | -)\n"
          "  gqp explain [-c config.yaml] [--device auto|cpu|gpu] [--threads N] [--analyze]\n"
          "          [--format text|json|dot] (FILE | -e SQL | -)\n"
          "  gqp gen test [--rows N] --out DIR [--seed S]\n"
          "  gqp gen ssb --sf N --out DIR [--seed S] [--no-lineorder-tbl]\n"
          "  gqp gen tpch --sf N --out DIR [--float] [--keep-csv] [--duckdb FILE] [--jobs N]\n"
          "  gqp calibrate [--out FILE] [--threads N] [--max-rows N]\n"
          "          (default FILE: $XDG_CONFIG_HOME/gqp/cost-local.yaml, else\n"
          "          ~/.config/gqp/cost-local.yaml, used by later runs)\n"
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
    out_error(msg);
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

/* ---- subcommands ---- */

/* Parse the options of `run` (is_run 1) / `explain` (0) / the shell (2)
 * from argv[first..argc) into o; the shell's one word is its database
 * (o->config), it takes no SQL. Returns 0, 1 after printing a usage error,
 * or 2 after printing the usage for --help / -h. */
static int parse_opts(int argc, char **argv, int first, int is_run, CliOpts *o) {
    memset(o, 0, sizeof *o);
    o->threads = -1;
    o->mode = MODE_TABLE;
    o->format = "text";
    for (int i = first; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 2;
        }
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
        } else if (strcmp(a, "-e") == 0 && is_run != 2) {
            if (!v) return usage_error("missing SQL after", a);
            if (o->sql_arg || o->file) return usage_error("give one of FILE, -e SQL or -", NULL);
            o->sql_arg = v;
            i++;
        } else if (is_run && strcmp(a, "--mode") == 0) {
            if (!v) return usage_error("missing value for", a);
            if (out_parse_mode(v, &o->mode) != 0)
                return usage_error("--mode needs table, csv, json, markdown or line, got", v);
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
        } else if (is_run == 2) {
            if (o->config) return usage_error("give one database (DB or -c), got another:", a);
            o->config = a;
        } else {
            if (o->sql_arg || o->file) return usage_error("give one of FILE, -e SQL or -", NULL);
            o->file = a;
        }
    }
    if (is_run == 2) return 0;
    if (!o->sql_arg && !o->file) return usage_error("no SQL given: FILE, -e SQL or -", NULL);
    return 0;
}

/* `gqp run`: execute every statement of the script in turn, printing query
 * results. Stops at the first error. Standard input ("-") runs statement by
 * statement as it arrives. Returns the exit status. */
static int cmd_run(int argc, char **argv) {
    CliOpts o;
    int prc = parse_opts(argc, argv, 2, 1, &o);
    if (prc) return prc == 2 ? 0 : 1;
    if (o.file && strcmp(o.file, "-") == 0) {
        gqp *db = open_db(&o);
        if (!db) return 1;
        OutOpts oo = {o.mode, o.timer, 0};
        int status = shell_run_stream(db, stdin, &oo);
        gqp_close(db);
        return status;
    }
    char *sql = load_sql(&o);
    if (!sql) return 1;
    gqp *db = open_db(&o);
    if (!db) {
        free(sql);
        return 1;
    }
    OutOpts oo = {o.mode, o.timer, 0};
    int status = out_exec(db, sql, (int64_t)strlen(sql), &oo);
    gqp_close(db);
    free(sql);
    return status;
}

/* `gqp [DB]`, `gqp shell [options] [DB]`: the interactive shell (options
 * and DB from argv[first..argc)), or statement-by-statement SQL and dot
 * commands from a non-terminal standard input. Returns the exit status. */
static int cmd_shell(int argc, char **argv, int first) {
    CliOpts o;
    int prc = parse_opts(argc, argv, first, 2, &o);
    if (prc) return prc == 2 ? 0 : 1;
    gqp *db = open_db(&o);
    if (!db) return 1;
    char banner[160];
    snprintf(banner, sizeof banner, "gqp %s (libgqp %s, GPU %s)", GQP_CLI_VERSION, gqp_libversion(),
             gqp_gpu_available() ? "available" : "not available");
    ShellOpts so = {{o.mode, o.timer, 0}, o.device, banner, resolve_config(&o)};
    int status = shell_main(db, &so);
    gqp_close(db);
    return status;
}

/* `gqp explain`: print the placed DAG of every query of the script (a
 * blank line between plans); every other statement (SET, CREATE, INSERT,
 * ...) is executed, printing nothing, so the queries after it are planned
 * with it in effect. Stops at the first error; a script without a query
 * is an error. Returns the exit status. */
static int cmd_explain(int argc, char **argv) {
    CliOpts o;
    int prc = parse_opts(argc, argv, 2, 0, &o);
    if (prc) return prc == 2 ? 0 : 1;
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
    int status = 0, nplans = 0;
    const char *p = sql, *end = sql + strlen(sql);
    while (*p && status == 0) {
        gqp_stmt *st = NULL;
        const char *tail = NULL;
        char *out = NULL;
        if (gqp_prepare(db, p, (int64_t)(end - p), &st, &tail) != GQP_OK) {
            print_error(gqp_errmsg(db));
            status = 1;
            break;
        }
        if (!st) break;
        if (gqp_explain_stmt(st, flags, &out) != GQP_OK) {
            print_error(gqp_errmsg(db));
            status = 1;
        } else if (out) {
            size_t n = strlen(out);
            if (nplans++) fputc('\n', stdout);
            fputs(out, stdout);
            if (n == 0 || out[n - 1] != '\n') fputc('\n', stdout);
            fflush(stdout);
        } else {
            int rc;
            while ((rc = gqp_step(st)) == GQP_ROW)
                ;
            if (rc != GQP_DONE) {
                print_error(gqp_errmsg(db));
                status = 1;
            }
        }
        gqp_free(out);
        gqp_finalize(st);
        if (!tail || tail <= p) break;
        p = tail;
    }
    if (status == 0 && nplans == 0) {
        fputs("Not implemented Error: EXPLAIN of a non-SELECT: the SQL holds no query to explain\n",
              stderr);
        status = 1;
    }
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

/* gqp_calibrate_progress's callback for a terminal: one line on stderr,
 * rewritten in place, "[n/m] what". */
static void calibrate_progress(void *ud, int step, int nsteps, const char *what) {
    (void)ud;
    fprintf(stderr, "\r\033[K[%d/%d] %s", step, nsteps, what);
    fflush(stderr);
}

/* `gqp calibrate`: measure the primitives and transfers of this machine
 * and write the cost model: --out FILE, by default the user's cost file
 * ($XDG_CONFIG_HOME/gqp/cost-local.yaml or ~/.config/gqp/cost-local.yaml,
 * which later runs pick up by themselves). A progress line on stderr when
 * it is a terminal. Returns the exit status. */
static int cmd_calibrate(int argc, char **argv) {
    const char *out = NULL;
    char user[4096];
    uint64_t threads = 0, max_rows = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        }
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
    if (!out && gqp_user_cost_path(user, sizeof user) == GQP_OK) out = user;
    if (!out) return usage_error("neither XDG_CONFIG_HOME nor HOME is set: give --out FILE", NULL);
    int tty = isatty(2);
    fprintf(stderr, "calibrating (GPU %s) into %s; this takes a while...\n",
            gqp_gpu_available() ? "available" : "not available: CPU only", out);
    char *err = NULL;
    int rc = gqp_calibrate_progress(out, (int)threads, (int64_t)max_rows,
                                    tty ? calibrate_progress : NULL, NULL, &err);
    if (tty) fputs("\r\033[K", stderr);
    if (rc != GQP_OK) {
        print_error(err ? err : "gqp: calibrate failed");
        gqp_free(err);
        return 1;
    }
    printf("wrote %s\n", out);
    return 0;
}

/* --seed S and --out DIR, which gen ssb and gen test take: 0 when a is
 * one of them (its value v taken), -1 when it is not, else the exit status
 * of the usage error printed. */
static int gen_seed_out(const char *a, const char *v, uint64_t *seed, const char **dir) {
    if (strcmp(a, "--seed") == 0) {
        if (parse_u64(v, seed) != 0)
            return usage_error("--seed needs a number, got", v ? v : "nothing");
        return 0;
    }
    if (strcmp(a, "--out") == 0) {
        if (!v) return usage_error("missing value for", a);
        *dir = v;
        return 0;
    }
    return -1;
}

/* `gqp gen ssb`: write the Star Schema Benchmark's tables (.tbl, binary
 * folders, gqp.yaml, gqp-tbl.yaml) at --sf N; --no-lineorder-tbl leaves
 * out lineorder.tbl and gqp-tbl.yaml. Returns the exit status. */
static int cmd_gen_ssb(int argc, char **argv) {
    uint64_t seed = 1;
    double sf = -1;
    const char *dir = NULL;
    unsigned flags = 0;
    for (int i = 3; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--no-lineorder-tbl") == 0) {
            flags |= GQP_GEN_NO_FACT_TBL;
            continue;
        }
        int g = gen_seed_out(a, v, &seed, &dir);
        if (g > 0) return g;
        if (g < 0 && strcmp(a, "--sf") == 0) {
            char *end = NULL;
            sf = v ? strtod(v, &end) : -1;
            if (!v || !*v || *end || !(sf > 0))
                return usage_error("--sf needs a positive scale factor, got", v ? v : "nothing");
        } else if (g < 0) {
            return usage_error("unknown option", a);
        }
        i++;
    }
    if (sf < 0) return usage_error("gen ssb needs --sf N", NULL);
    if (!dir) return usage_error("gen ssb needs --out DIR", NULL);
    char *err = NULL;
    if (gqp_gen_ssb(dir, sf, seed, flags, &err) != GQP_OK) {
        print_error(err ? err : "gqp: gen ssb failed");
        gqp_free(err);
        return 1;
    }
    printf("wrote SSB SF %g (seed %" PRIu64 ") to %s: %s\n", sf, seed, dir,
           flags ? "the dimensions' *.tbl, bin/, gqp.yaml" : "*.tbl, bin/, gqp.yaml, gqp-tbl.yaml");
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
 * default, kept for scripts); --duckdb FILE keeps DuckDB's database;
 * --jobs N runs dbgen in N processes (the script's default: all cores from
 * SF 0.5 up), each writing its part of every table (csv/<table>.<i>.csv,
 * listed as one source in csv/<table>.yaml; the script removes them after
 * gqp's answer unless --keep-csv). Returns the exit status. */
static int cmd_gen_tpch(int argc, char **argv) {
    const char *dir = NULL, *sf = NULL, *duck = NULL, *jobs = NULL;
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
        } else if (strcmp(a, "--jobs") == 0) {
            char *end = NULL;
            long x = v ? strtol(v, &end, 10) : -1;
            if (!v || !*v || *end || x < 1 || x > 1024)
                return usage_error("--jobs needs a process count in [1, 1024], got",
                                   v ? v : "nothing");
            jobs = v;
        } else {
            return usage_error("unknown option", a);
        }
        i++;
    }
    if (!sf) return usage_error("gen tpch needs --sf N", NULL);
    if (!dir) return usage_error("gen tpch needs --out DIR", NULL);
    const char *py = getenv("GQP_PYTHON");
    if (!py || !py[0]) py = "python3";
    const char *args[16];
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
    if (jobs) {
        args[n++] = "--jobs";
        args[n++] = jobs;
    }
    if (keep_csv) args[n++] = "--keep-csv"; /* the script removes part files itself */
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
    for (int i = 2; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        }
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
        int g = gen_seed_out(a, v, &seed, &dir);
        if (g > 0) return g;
        if (g < 0 && strcmp(a, "--rows") == 0) {
            if (parse_u64(v, &rows) != 0 || rows > (uint64_t)INT64_MAX)
                return usage_error("--rows needs a row count, got", v ? v : "nothing");
        } else if (g < 0) {
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

/* 1 when word, not a subcommand, names a database for the shell: an
 * existing path, a directory-like path ("mydb/") or a YAML config name. */
static int is_db_word(const char *word) {
    struct stat sb;
    size_t n = strlen(word);
    if (stat(word, &sb) == 0) return 1;
    if (n > 0 && word[n - 1] == '/') return 1;
    return (n > 5 && strcmp(word + n - 5, ".yaml") == 0) ||
           (n > 4 && strcmp(word + n - 4, ".yml") == 0);
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

/* Dispatch on the subcommand (none, an option or a database: the shell).
 * Returns the process exit status. */
int main(int argc, char **argv) {
    if (argc < 2) return cmd_shell(argc, argv, 1);
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
    if (strcmp(cmd, "shell") == 0) return cmd_shell(argc, argv, 2);
    if (cmd[0] == '-' || is_db_word(cmd)) return cmd_shell(argc, argv, 1);
    return usage_error("unknown command (and no such database)", cmd);
}
