/*
 * shell.c -- the interactive shell of the `gqp` command, in the manner of
 * sqlite3's and duckdb's: prompts "gqp> " and "  ...> ", statements that
 * run when their ';' is typed (shell_sql_complete), dot commands (.help
 * lists them), line editing and history through GNU readline where the
 * build found it (GQP_HAVE_READLINE; else a plain line reader), Ctrl-C
 * interrupting the running query (gqp_interrupt) or discarding the line
 * being typed. The same reader, without prompts, runs a non-terminal
 * standard input statement by statement as it arrives (`echo ... | gqp`,
 * `gqp run -`). Uses only the public API in include/gqp.h and the printers
 * of output.c.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* getline, sigaction, strdup */
#endif
#include "shell.h"

#include <errno.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#ifdef GQP_HAVE_READLINE
#include <readline/history.h>
#include <readline/readline.h>
#endif

#define PROMPT "gqp> "
#define CONT_PROMPT "  ...> "
/* .read files may .read others this deep (a file reading itself stops). */
#define READ_DEPTH_MAX 16
/* History entries kept in the history file. */
#define HISTORY_MAX 1000
/* Words of a dot command, the command included. */
#define DOT_MAX_ARGS 8

/* The shell's state. */
typedef struct Shell {
    gqp *db;
    OutOpts out;      /* .mode, .timer, .explain */
    char device[8];   /* .device: "auto", "cpu" or "gpu" */
    int interactive;  /* reading the terminal: prompts, history, Ctrl-C */
    int dot_commands; /* lines starting with '.' are dot commands */
    int bail;         /* the first error ends the input (gqp run -) */
    int status;       /* 1 once a statement or dot command failed */
    int quit;         /* .quit, or an error with bail */
    int depth;        /* .read nesting */
} Shell;

/* A growing NUL-terminated text buffer. */
typedef struct Text {
    char *s;
    size_t len, cap;
} Text;

/* Set by SIGINT while no statement runs: the line being typed is dropped.
 * g_running says a statement runs (SIGINT then interrupts it on g_db). */
static volatile sig_atomic_t g_cancel, g_running;
static gqp *g_db;

/* Append s[0..n) to t. Returns 0, or -1 on allocation failure (t keeps
 * its text). */
static int text_add(Text *t, const char *s, size_t n) {
    if (t->len + n + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n + 1)
            cap *= 2;
        char *ns = realloc(t->s, cap);
        if (!ns) return -1;
        t->s = ns;
        t->cap = cap;
    }
    memcpy(t->s + t->len, s, n);
    t->len += n;
    t->s[t->len] = '\0';
    return 0;
}

/* 1 when s holds nothing but white space. */
static int is_blank(const char *s) {
    for (; *s; s++)
        if (!strchr(" \t\r\n\f\v", *s)) return 0;
    return 1;
}

/* The state of an incremental scan for the end of a statement: the shell
 * scans each line once as it is added, so a statement of many lines costs
 * linear time. */
typedef struct SqlScan {
    size_t pos;  /* bytes scanned */
    char quote;  /* the open quote character, or 0 */
    int comment; /* 0 none, 1 inside --, 2 inside / * * / */
    int ends;    /* the last token seen is ';' */
    int any;     /* a token was seen */
} SqlScan;

/* Continue scan sc over sql[sc->pos..n) (sql grows between calls; a
 * two-byte comment mark cut at n is left for the next call). */
static void scan_more(SqlScan *sc, const char *sql, size_t n) {
    while (sc->pos < n) {
        char c = sql[sc->pos];
        char next = sc->pos + 1 < n ? sql[sc->pos + 1] : '\0';
        if (sc->quote) {
            if (c == sc->quote) sc->quote = 0; /* a doubled quote reopens at once */
        } else if (sc->comment == 1) {
            if (c == '\n') sc->comment = 0;
        } else if (sc->comment == 2) {
            if (c == '*' && sc->pos + 1 >= n) return;
            if (c == '*' && next == '/') {
                sc->comment = 0;
                sc->pos++;
            }
        } else if ((c == '-' || c == '/') && sc->pos + 1 >= n) {
            return; /* maybe the first half of a comment mark */
        } else if (c == '-' && next == '-') {
            sc->comment = 1;
            sc->pos++;
        } else if (c == '/' && next == '*') {
            sc->comment = 2;
            sc->pos++;
        } else if (c == '\'' || c == '"' || c == '`') {
            sc->quote = c;
            sc->ends = 0;
            sc->any = 1;
        } else if (c == ';') {
            sc->ends = sc->any = 1;
        } else if (!strchr(" \t\r\n\f\v", c)) {
            sc->ends = 0;
            sc->any = 1;
        }
        sc->pos++;
    }
}

/* 1 when the text scanned by sc ends with a complete statement. */
static int scan_complete(const SqlScan *sc) {
    return sc->ends && !sc->quote && sc->comment != 2;
}

/* 1 when the text scanned by sc holds only white space and closed
 * comments. */
static int scan_empty(const SqlScan *sc) {
    return !sc->any && !sc->quote && sc->comment != 2;
}

int shell_sql_complete(const char *sql, size_t n) {
    SqlScan sc;
    memset(&sc, 0, sizeof sc);
    scan_more(&sc, sql, n);
    /* a mark cut at the end is one '-' or '/': not the end of a statement */
    return sc.pos == n && scan_complete(&sc);
}

/* ---- running statements ---- */

/* Run the statements of sql[0..len) with the shell's output options; an
 * error sets the status (and ends the input under bail). */
static void run_sql(Shell *sh, const char *sql, size_t len) {
    g_running = 1;
    int rc = out_exec(sh->db, sql, (int64_t)len, &sh->out);
    g_running = 0;
    if (rc != 0) {
        sh->status = 1;
        if (sh->bail) sh->quit = 1;
    }
}

/* A list of strings (malloc'd, owned by the list). */
typedef struct StrList {
    char **v;
    size_t n, cap;
} StrList;

/* Append a copy of s (NULL stays NULL) to l. Returns 0 or -1 (no memory). */
static int list_add(StrList *l, const char *s) {
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 16;
        char **nv = realloc(l->v, cap * sizeof *nv);
        if (!nv) return -1;
        l->v = nv;
        l->cap = cap;
    }
    char *c = NULL;
    if (s && !(c = strdup(s))) return -1;
    l->v[l->n++] = c;
    return 0;
}

/* Free the strings of l and its array. */
static void list_free(StrList *l) {
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* Run the query sql and append, for every row, the text of the columns
 * named in names[0..k) (a name the result lacks: the column at the same
 * position) to out, k strings per row (NULL for SQL NULL). Returns 0, or
 * -1 after printing the error. */
static int query_strings(Shell *sh, const char *sql, const char *const *names, int k,
                         StrList *out) {
    gqp_stmt *st = NULL;
    if (gqp_prepare(sh->db, sql, -1, &st, NULL) != GQP_OK || !st) {
        out_error(gqp_errmsg(sh->db));
        gqp_finalize(st);
        return -1;
    }
    int ncols = gqp_column_count(st), idx[8];
    for (int j = 0; j < k && j < 8; j++) {
        idx[j] = j < ncols ? j : -1;
        for (int c = 0; c < ncols; c++)
            if (strcmp(gqp_column_name(st, c), names[j]) == 0) idx[j] = c;
    }
    int rc;
    g_running = 1;
    while ((rc = gqp_step(st)) == GQP_ROW)
        for (int j = 0; j < k; j++)
            if (list_add(out, idx[j] >= 0 ? gqp_column_text(st, idx[j]) : NULL) != 0) {
                rc = GQP_NOMEM;
                goto done;
            }
done:
    g_running = 0;
    if (rc != GQP_DONE) out_error(rc == GQP_NOMEM ? "gqp: out of memory" : gqp_errmsg(sh->db));
    gqp_finalize(st);
    return rc == GQP_DONE ? 0 : -1;
}

/* Append identifier name to t as SQL: as is when it is a plain identifier
 * ([A-Za-z_][A-Za-z0-9_]*), else double-quoted with '"' doubled. quote
 * forces the quotes. Returns 0 or -1 (no memory). */
static int add_ident(Text *t, const char *name, int quote) {
    int plain = !quote && name[0] && !(name[0] >= '0' && name[0] <= '9');
    for (const char *p = name; plain && *p; p++)
        plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' ||
                (*p >= '0' && *p <= '9');
    if (plain) return text_add(t, name, strlen(name));
    int rc = text_add(t, "\"", 1);
    for (const char *p = name; rc == 0 && *p; p++)
        rc = *p == '"' ? text_add(t, "\"\"", 2) : text_add(t, p, 1);
    return rc == 0 ? text_add(t, "\"", 1) : rc;
}

/* Append s to t as a SQL string literal ('...' with ' doubled). */
static int add_literal(Text *t, const char *s) {
    int rc = text_add(t, "'", 1);
    for (const char *p = s; rc == 0 && *p; p++)
        rc = *p == '\'' ? text_add(t, "''", 2) : text_add(t, p, 1);
    return rc == 0 ? text_add(t, "'", 1) : rc;
}

/* ---- dot commands ---- */

/* Width of the terminal on stdout, 80 when it is not one. */
static int term_width(void) {
    struct winsize ws;
    if (isatty(1) && ioctl(1, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
    return 80;
}

/* .tables: the names SHOW TABLES returns, in columns as sqlite3 lists
 * them (down, then across). */
static int dot_tables(Shell *sh) {
    static const char *const names[] = {"name"};
    StrList l = {0};
    if (query_strings(sh, "SHOW TABLES", names, 1, &l) != 0) return -1;
    size_t w = 0;
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i] && strlen(l.v[i]) > w) w = strlen(l.v[i]);
    size_t per_line = (size_t)term_width() / (w + 2);
    if (per_line < 1) per_line = 1;
    size_t rows = (l.n + per_line - 1) / per_line;
    for (size_t r = 0; r < rows; r++) {
        for (size_t i = r; i < l.n; i += rows) {
            const char *s = l.v[i] ? l.v[i] : "";
            if (i + rows < l.n)
                printf("%-*s", (int)(w + 2), s);
            else
                fputs(s, stdout);
        }
        fputc('\n', stdout);
    }
    list_free(&l);
    return 0;
}

/* Print "CREATE TABLE t (col TYPE, ...);" for table t from DESCRIBE t. */
static int schema_one(Shell *sh, const char *table) {
    static const char *const names[] = {"column_name", "column_type", "null"};
    Text q = {0}, out = {0};
    StrList l = {0};
    int rc = text_add(&q, "DESCRIBE ", 9);
    if (rc == 0) rc = add_ident(&q, table, 1);
    if (rc != 0) {
        out_error("gqp: out of memory");
        free(q.s);
        return -1;
    }
    rc = query_strings(sh, q.s, names, 3, &l);
    free(q.s);
    if (rc != 0) return -1;
    rc = text_add(&out, "CREATE TABLE ", 13);
    if (rc == 0) rc = add_ident(&out, table, 0);
    if (rc == 0) rc = text_add(&out, " (", 2);
    for (size_t i = 0; rc == 0 && i + 2 < l.n; i += 3) {
        if (i) rc = text_add(&out, ", ", 2);
        if (rc == 0) rc = add_ident(&out, l.v[i] ? l.v[i] : "", 0);
        if (rc == 0 && l.v[i + 1]) rc = text_add(&out, " ", 1);
        if (rc == 0 && l.v[i + 1]) rc = text_add(&out, l.v[i + 1], strlen(l.v[i + 1]));
        if (rc == 0 && l.v[i + 2] && strcmp(l.v[i + 2], "NO") == 0)
            rc = text_add(&out, " NOT NULL", 9);
    }
    if (rc == 0) rc = text_add(&out, ");", 2);
    if (rc == 0)
        puts(out.s);
    else
        out_error("gqp: out of memory");
    free(out.s);
    list_free(&l);
    return rc == 0 ? 0 : -1;
}

/* .schema [t]: CREATE TABLE statements of t, or of every table SHOW
 * TABLES lists. */
static int dot_schema(Shell *sh, const char *table) {
    if (table) return schema_one(sh, table);
    static const char *const names[] = {"name"};
    StrList l = {0};
    if (query_strings(sh, "SHOW TABLES", names, 1, &l) != 0) return -1;
    int rc = 0;
    for (size_t i = 0; i < l.n; i++)
        if (l.v[i] && schema_one(sh, l.v[i]) != 0) rc = -1;
    list_free(&l);
    return rc;
}

/* .import FILE TABLE: CREATE TABLE "TABLE" AS SELECT * FROM
 * read_csv('FILE') when no such table exists, else INSERT INTO "TABLE"
 * SELECT * FROM read_csv('FILE'). */
static int dot_import(Shell *sh, const char *file, const char *table) {
    FILE *f = fopen(file, "rb");
    if (!f) {
        fprintf(stderr, "Error: cannot open \"%s\": %s\n", file, strerror(errno));
        return -1;
    }
    fclose(f);
    Text probe = {0}, q = {0};
    int rc = text_add(&probe, "SELECT * FROM ", 14);
    if (rc == 0) rc = add_ident(&probe, table, 1);
    if (rc == 0) rc = text_add(&probe, " LIMIT 0", 8);
    int exists = 0;
    if (rc == 0) {
        gqp_stmt *st = NULL;
        exists = gqp_prepare(sh->db, probe.s, -1, &st, NULL) == GQP_OK && st;
        gqp_finalize(st);
    }
    if (rc == 0) rc = exists ? text_add(&q, "INSERT INTO ", 12) : text_add(&q, "CREATE TABLE ", 13);
    if (rc == 0) rc = add_ident(&q, table, 1);
    if (rc == 0) rc = exists ? text_add(&q, " SELECT", 7) : text_add(&q, " AS SELECT", 10);
    if (rc == 0) rc = text_add(&q, " * FROM read_csv(", 17);
    if (rc == 0) rc = add_literal(&q, file);
    if (rc == 0) rc = text_add(&q, ")", 1);
    free(probe.s);
    if (rc != 0) {
        out_error("gqp: out of memory");
        free(q.s);
        return -1;
    }
    g_running = 1;
    OutOpts quiet = sh->out;
    quiet.explain = 0;
    rc = out_exec(sh->db, q.s, (int64_t)q.len, &quiet);
    g_running = 0;
    free(q.s);
    return rc == 0 ? 0 : -1;
}

/* .device auto|cpu|gpu: where the next statements run. */
static int dot_device(Shell *sh, const char *v) {
    gqp_device dev;
    if (!v) {
        printf("device: %s\n", sh->device);
        return 0;
    }
    if (strcmp(v, "auto") == 0)
        dev = GQP_DEVICE_AUTO;
    else if (strcmp(v, "cpu") == 0)
        dev = GQP_DEVICE_CPU;
    else if (strcmp(v, "gpu") == 0)
        dev = GQP_DEVICE_GPU;
    else {
        fprintf(stderr, "Error: .device needs auto, cpu or gpu, got \"%s\"\n", v);
        return -1;
    }
    if (gqp_set_device(sh->db, dev) != GQP_OK) {
        const char *m = gqp_errmsg(sh->db);
        out_error(strcmp(m, "not an error") == 0
                      ? "Device Error: .device gpu: no usable CUDA device"
                      : m);
        return -1;
    }
    snprintf(sh->device, sizeof sh->device, "%s", v);
    return 0;
}

/* Parse an on/off word into *flag. Returns 0, or -1 after an error. */
static int parse_flag(const char *cmd, const char *v, int *flag) {
    static const char *const on[] = {"on", "1", "yes", "true"};
    static const char *const off[] = {"off", "0", "no", "false"};
    for (int i = 0; v && i < 4; i++) {
        if (strcmp(v, on[i]) == 0) return *flag = 1, 0;
        if (strcmp(v, off[i]) == 0) return *flag = 0, 0;
    }
    fprintf(stderr, "Error: %s needs on or off\n", cmd);
    return -1;
}

/* Print the dot commands. */
static void dot_help(void) {
    fputs(".device [auto|cpu|gpu]  where statements run (no argument: show it)\n"
          ".exit                   leave the shell (also .quit, Ctrl-D)\n"
          ".explain on|off         print each query's plan before its result\n"
          ".help                   this list\n"
          ".import FILE TABLE      load a CSV file into TABLE (created when missing)\n"
          ".mode [MODE]            output mode: table, csv, json, markdown or line\n"
          ".quit                   leave the shell\n"
          ".read FILE              run the statements and dot commands of FILE\n"
          ".schema [TABLE]         CREATE TABLE statements of TABLE or of every table\n"
          ".tables                 names of the tables and views\n"
          ".timer on|off           print each statement's run time\n"
          "SQL statements end with ';' and may span lines. Ctrl-C stops a running\n"
          "query or drops the statement being typed.\n",
          stdout);
}

static void shell_loop(Shell *sh, FILE *in, int interactive);

/* .read FILE: the statements and dot commands of FILE, as if typed. */
static int dot_read(Shell *sh, const char *path) {
    if (sh->depth >= READ_DEPTH_MAX) {
        fprintf(stderr, "Error: .read nested more than %d deep\n", READ_DEPTH_MAX);
        return -1;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "Error: cannot open \"%s\": %s\n", path, strerror(errno));
        return -1;
    }
    int before = sh->status;
    sh->status = 0;
    sh->depth++;
    shell_loop(sh, f, 0);
    sh->depth--;
    fclose(f);
    int failed = sh->status;
    sh->status = before;
    return failed ? -1 : 0;
}

/* Split the dot command line into words (quotes '...' and "..." group,
 * as in sqlite3); argv entries point into line, which is modified.
 * Returns the word count (at most DOT_MAX_ARGS; extra words are ignored
 * and counted as one more, so a caller sees too many). */
static int split_words(char *line, char **argv) {
    int n = 0;
    char *p = line;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == '\r')
            p++;
        if (!*p) break;
        char *w = p;
        if (*p == '\'' || *p == '"') {
            char q = *p++;
            w = p;
            while (*p && *p != q)
                p++;
        } else {
            while (*p && *p != ' ' && *p != '\t' && *p != '\r')
                p++;
        }
        if (*p) *p++ = '\0';
        if (n < DOT_MAX_ARGS) argv[n] = w;
        n++;
    }
    return n;
}

/* Run one dot command line (its first non-blank character is '.'). A
 * failure is printed and sets the status. */
static void run_dot(Shell *sh, const char *text) {
    char *line = strdup(text), *argv[DOT_MAX_ARGS];
    if (!line) {
        out_error("gqp: out of memory");
        sh->status = 1;
        return;
    }
    int argc = split_words(line, argv), rc = 0;
    const char *cmd = argc > 0 ? argv[0] : ".", *a1 = argc > 1 ? argv[1] : NULL;
    const char *a2 = argc > 2 ? argv[2] : NULL;
    if ((strcmp(cmd, ".quit") == 0 || strcmp(cmd, ".exit") == 0) && argc == 1) {
        sh->quit = 1;
    } else if (strcmp(cmd, ".help") == 0) {
        dot_help();
    } else if (strcmp(cmd, ".tables") == 0 && argc == 1) {
        rc = dot_tables(sh);
    } else if (strcmp(cmd, ".schema") == 0 && argc <= 2) {
        rc = dot_schema(sh, a1);
    } else if (strcmp(cmd, ".mode") == 0 && argc <= 2) {
        if (!a1) {
            printf("current output mode: %s\n", out_mode_name(sh->out.mode));
        } else if (out_parse_mode(a1, &sh->out.mode) != 0) {
            fprintf(stderr, "Error: mode should be one of: table csv json markdown line\n");
            rc = -1;
        }
    } else if (strcmp(cmd, ".timer") == 0 && argc == 2) {
        rc = parse_flag(cmd, a1, &sh->out.timer);
    } else if (strcmp(cmd, ".explain") == 0 && argc <= 2) {
        rc = parse_flag(cmd, a1 ? a1 : "on", &sh->out.explain);
    } else if (strcmp(cmd, ".device") == 0 && argc <= 2) {
        rc = dot_device(sh, a1);
    } else if (strcmp(cmd, ".read") == 0 && argc == 2) {
        rc = dot_read(sh, a1);
    } else if (strcmp(cmd, ".import") == 0 && argc == 3) {
        rc = dot_import(sh, a1, a2);
    } else {
        fprintf(stderr,
                "Error: unknown command or invalid arguments: \"%s\". Enter \".help\" for help\n",
                cmd + (cmd[0] == '.'));
        rc = -1;
    }
    fflush(stdout);
    if (rc != 0) sh->status = 1;
    free(line);
}

/* ---- reading lines ---- */

/* SIGINT in the interactive shell: interrupt the running statement, or
 * drop the line being typed and show a fresh prompt. */
static void on_sigint(int sig) {
    (void)sig;
    if (g_running) {
        gqp_interrupt(g_db);
        return;
    }
    g_cancel = 1;
#ifdef GQP_HAVE_READLINE
    if (write(1, "\n", 1) < 0) return;
    rl_replace_line("", 0);
    rl_set_prompt(PROMPT);
    rl_on_new_line();
    rl_redisplay();
#endif
}

/* The next line of in without its line break (malloc'd, caller frees), or
 * NULL at the end of the input. Interactive: shows prompt first (through
 * readline where built with it); a Ctrl-C while waiting returns "" with
 * g_cancel set. */
static char *read_line(FILE *in, int interactive, const char *prompt) {
#ifdef GQP_HAVE_READLINE
    if (interactive) return readline(prompt);
#endif
    if (interactive) {
        fputs(prompt, stdout);
        fflush(stdout);
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, in);
    if (n < 0) {
        if (interactive && g_cancel && !feof(in)) {
            clearerr(in);
            fputc('\n', stdout);
            if (!line) line = malloc(1);
            if (line) line[0] = '\0';
            return line;
        }
        free(line);
        return NULL;
    }
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    return line;
}

/* Read in line by line until its end or .quit: dot commands at the start
 * of a statement run at once, SQL runs when shell_sql_complete says its
 * ';' has been read, a last statement without ';' at the end. */
static void shell_loop(Shell *sh, FILE *in, int interactive) {
    Text buf = {0};
    SqlScan scan;
    memset(&scan, 0, sizeof scan);
    while (!sh->quit) {
        char *line = read_line(in, interactive, buf.len ? CONT_PROMPT : PROMPT);
        if (g_cancel) { /* Ctrl-C while typing: drop the statement so far */
            g_cancel = 0;
            buf.len = 0;
            memset(&scan, 0, sizeof scan);
        }
        if (!line) break;
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (buf.len == 0 && sh->dot_commands && *p == '.') {
#ifdef GQP_HAVE_READLINE
            if (interactive) add_history(p);
#endif
            run_dot(sh, p);
            free(line);
            continue;
        }
        if (buf.len == 0 && is_blank(line)) {
            free(line);
            continue;
        }
        int rc = text_add(&buf, line, strlen(line));
        if (rc == 0) rc = text_add(&buf, "\n", 1);
        free(line);
        if (rc != 0) {
            out_error("gqp: out of memory");
            sh->status = 1;
            break;
        }
        scan_more(&scan, buf.s, buf.len);
        if (scan_empty(&scan)) {
            buf.len = 0; /* only comments so far: nothing to continue */
            memset(&scan, 0, sizeof scan);
        } else if (scan_complete(&scan)) {
#ifdef GQP_HAVE_READLINE
            if (interactive) {
                buf.s[buf.len - 1] = '\0'; /* the history entry without the last newline */
                add_history(buf.s);
                buf.s[buf.len - 1] = '\n';
            }
#endif
            run_sql(sh, buf.s, buf.len);
            buf.len = 0;
            memset(&scan, 0, sizeof scan);
        }
    }
    if (!sh->quit && buf.len > 0 && !is_blank(buf.s)) run_sql(sh, buf.s, buf.len);
    free(buf.s);
}

#ifdef GQP_HAVE_READLINE
/* The history file: $GQP_HISTORY when set (empty: none), else
 * ~/.gqp_history; NULL for none. malloc'd. */
static char *history_path(void) {
    const char *env = getenv("GQP_HISTORY");
    if (env) return *env ? strdup(env) : NULL;
    const char *home = getenv("HOME");
    if (!home || !*home) return NULL;
    size_t n = strlen(home) + 16;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/.gqp_history", home);
    return p;
}
#endif

int shell_main(gqp *db, const ShellOpts *o) {
    Shell sh;
    memset(&sh, 0, sizeof sh);
    sh.db = db;
    sh.out = o->out;
    sh.dot_commands = 1;
    sh.interactive = isatty(0);
    snprintf(sh.device, sizeof sh.device, "%s", o->device ? o->device : "auto");
    if (!sh.interactive) {
        shell_loop(&sh, stdin, 0);
        return sh.status;
    }
    setlocale(LC_CTYPE, ""); /* readline edits UTF-8; numbers stay in the C locale */
    if (o->banner) printf("%s\n", o->banner);
    printf("Enter \".help\" for usage hints.\n");
    if (o->db_name)
        printf("Connected to %s.\n", o->db_name);
    else
        printf("Connected to an empty in-memory database.\n");
#ifdef GQP_HAVE_READLINE
    char *hist = history_path();
    rl_catch_signals = 0; /* SIGINT is on_sigint's */
    using_history();
    stifle_history(HISTORY_MAX);
    if (hist) read_history(hist);
#endif
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: a plain read returns EINTR */
    g_db = db;
    sigaction(SIGINT, &sa, &old);
    shell_loop(&sh, stdin, 1);
    sigaction(SIGINT, &old, NULL);
    g_db = NULL;
    if (!sh.quit) fputc('\n', stdout); /* Ctrl-D: end the prompt's line */
#ifdef GQP_HAVE_READLINE
    if (hist) write_history(hist);
    free(hist);
#endif
    return 0;
}

int shell_run_stream(gqp *db, FILE *in, const OutOpts *o) {
    Shell sh;
    memset(&sh, 0, sizeof sh);
    sh.db = db;
    sh.out = *o;
    sh.bail = 1;
    snprintf(sh.device, sizeof sh.device, "auto");
    shell_loop(&sh, in, 0);
    return sh.status;
}
