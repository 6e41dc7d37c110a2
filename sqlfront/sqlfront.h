/*
 * sqlfront.h -- tokenizer, parser and AST of gqp's SQL dialect, with syntax
 * errors that carry the byte offset. Knows nothing of tables.
 *
 * Memory: every AST node and string of one parse lives in a SqlArena and is
 * released at once by sql_arena_free(). Names are stored as written
 * (identifiers unquoted, case preserved); keywords are case-insensitive.
 */
#ifndef GQP_SQLFRONT_H
#define GQP_SQLFRONT_H

#include <stddef.h>
#include <stdint.h>

/* ---- arena ---- */
typedef struct SqlArena SqlArena;
SqlArena *sql_arena_new(void);
void sql_arena_free(SqlArena *a);
/* Zeroed memory from the arena; NULL on allocation failure. */
void *sql_arena_alloc(SqlArena *a, size_t bytes);
char *sql_arena_strndup(SqlArena *a, const char *s, size_t n);

/* ---- tokens ---- */
typedef enum SqlTokKind {
    TK_EOF = 0,
    TK_IDENT,   /* bare or "quoted" identifier (also keywords: see kw) */
    TK_INTEGER, /* 123 */
    TK_FLOAT,   /* 1.5, .5, 1e3 */
    TK_STRING,  /* 'it''s' (value has quotes removed, '' -> ') */
    TK_OP,      /* punctuation/operator: ( ) , ; . * + - / % = <> != < <= > >= || */
    TK_ERROR,   /* unterminated string/comment, stray character */
    TK_PARAM    /* bind parameter: ?, ?N, :name, $name, @name */
} SqlTokKind;

typedef struct SqlToken {
    SqlTokKind kind;
    int64_t pos; /* byte offset of the token's first char in the SQL text */
    int64_t len; /* bytes of the token in the SQL text */
    int quoted;  /* TK_IDENT written as "name" (never a keyword) */
} SqlToken;

/* Next token starting at byte offset pos of sql[0..len) (skipping
 * whitespace, -- comments and / * * / comments). */
SqlToken sql_next_token(const char *sql, int64_t len, int64_t pos);

/* ---- AST ---- */
typedef enum AstKind {
    AST_INT,    /* ival */
    AST_FLOAT,  /* fval */
    AST_STRING, /* str (unescaped, NUL-terminated) */
    AST_NULL,
    AST_DATE,    /* DATE 'yyyy-mm-dd': str holds the text, ival the days */
    AST_BOOL,    /* TRUE / FALSE: ival 1 / 0 */
    AST_COLUMN,  /* [table.]column: table may be NULL; name */
    AST_STAR,    /* * or t.* in a select list (table may be NULL), or COUNT(*) arg */
    AST_UNARY,   /* op in {OP_NEG, OP_NOT, OP_PLUS}, a */
    AST_BINARY,  /* op, a, b */
    AST_BETWEEN, /* a BETWEEN b AND c; negated for NOT BETWEEN */
    AST_IN,      /* a IN (list...); negated for NOT IN */
    AST_ISNULL,  /* a IS NULL, or a IS b when b is set; negated for IS NOT */
    AST_LIKE,    /* a LIKE b [ESCAPE c]; negated for NOT LIKE */
    AST_CASE,    /* CASE [a] WHEN list[0] THEN list[1] WHEN list[2] THEN list[3] ... [ELSE b] END */
    AST_CAST,    /* CAST(a AS type_name) */
    AST_FUNC,    /* name(list...) incl. COUNT(*) (list[0] is AST_STAR), distinct flag;
                    c: an aggregate's FILTER (WHERE c) */
    AST_PARAM,   /* bind parameter: ival its index (1-based); libgqp rewrites the node
                    into the bound literal (AST_INT / FLOAT / STRING / NULL) before binding */
    AST_SUBQUERY, /* (SELECT ...) as a scalar: select */
    AST_EXISTS    /* EXISTS (SELECT ...): select */
} AstKind;

typedef enum AstOp {
    OP_NONE = 0,
    OP_ADD,
    OP_SUB,
    OP_MUL,
    OP_DIV,
    OP_MOD,
    OP_EQ,
    OP_NE,
    OP_LT,
    OP_LE,
    OP_GT,
    OP_GE,
    OP_AND,
    OP_OR,
    OP_NOT,
    OP_NEG,
    OP_PLUS,
    OP_CONCAT,
    /* the binder's math functions (never from the parser): unary over a
     * REAL (BE_UNARY) and power (BE_BINARY) */
    OP_SQRT,
    OP_EXP,
    OP_LN,
    OP_LOG10,
    OP_LOG2,
    OP_POW,
    OP_FMOD /* the binder's MOD() of a REAL: fmod, NULL for a zero divisor */
} AstOp;

typedef struct AstExpr {
    AstKind kind;
    AstOp op;
    int64_t pos; /* byte offset where the expression starts */
    int64_t end; /* byte offset just past it (for column names like "a+b") */
    int64_t ival;
    double fval;
    char *str;   /* literal text, column name, function name, CAST type name */
    char *table; /* AST_COLUMN / AST_STAR qualifier or NULL */
    struct AstExpr *a, *b, *c;
    struct AstExpr **list;
    int nlist;
    int negated;  /* NOT BETWEEN / NOT IN / IS NOT NULL / NOT LIKE */
    int distinct; /* COUNT(DISTINCT x) etc. */
    /* AST_SUBQUERY, AST_EXISTS, and AST_IN over (SELECT ...) or a table:
     * the subquery, and the kind the parser gave the node. libgqp runs the
     * (uncorrelated) subquery before binding and rewrites the node into its
     * value (a literal) or, for IN, its list of values; every plan starts
     * again from sub_kind */
    struct AstSelect *select;
    AstKind sub_kind;
    /* AST_IN rewritten from a subquery of integers (libgqp): its n_ints
     * values in ints (NULLs left out, has_null set when there was one)
     * instead of a list of literals; NULL otherwise */
    const int64_t *ints;
    int64_t n_ints;
    int has_null;
    int height;     /* levels of the tree rooted here (1 for a leaf; a CASE or a
                       call also counts its arms / arguments, which the binder
                       chains); at most SQL_MAX_EXPR_DEPTH */
    int64_t weight; /* nodes of the tree as the binder expands it (BETWEEN's
                       operand counted twice, ABS's argument three times, the
                       operand of a short IN list once per value, ...); at
                       most SQL_MAX_EXPR_WEIGHT */
} AstExpr;

/* Deepest expression tree the parser builds (SQLite's SQLITE_MAX_EXPR_DEPTH):
 * deeper input fails with "Expression tree is too large (maximum depth
 * 1000)", so that no later stage recurses without bound. AND / OR chains and
 * IN lists are lists, not depth: a chain of n terms becomes a balanced tree
 * of height about log2(n). */
#define SQL_MAX_EXPR_DEPTH 1000
/* Most nodes an expression may expand to when bound: operands that the
 * binder uses twice (x BETWEEN a AND b is x >= a AND x <= b) would otherwise
 * let a short text, such as 30 nested BETWEENs, grow exponentially. Larger
 * input fails with "Expression tree is too large (more than 1000000 nodes
 * when expanded)". A 100000-term AND chain weighs about 400000. */
#define SQL_MAX_EXPR_WEIGHT 1000000
/* x IN (list) with more than this many values, all literals, is bound as one
 * probe of a sorted set (planner/bind.c, POP_INLIST), x used once; a shorter
 * list (or one with other values) as x = v1 OR x = v2 ..., x once per value.
 * TUNING: 1M rows, one thread: 4 values as = / OR 7.4 ms, 8 values 11.1 ms,
 * 9 values as a probe 5.3 ms (best of 5 runs, 2-core host). */
#define SQL_IN_SET_MIN 3

typedef struct AstSelectItem {
    AstExpr *expr;
    char *alias; /* AS alias or NULL */
} AstSelectItem;

/* One option of a table function: name = value (or name := value). */
typedef enum AstOptKind {
    AST_OPT_STRING,
    AST_OPT_INT,
    AST_OPT_BOOL,
    AST_OPT_LIST,
    AST_OPT_STRUCT
} AstOptKind;
typedef struct AstOpt {
    char *name; /* as written */
    int64_t pos;
    AstOptKind kind;
    char *str;    /* STRING */
    int64_t ival; /* INT, BOOL (1 / 0) */
    char **keys;  /* STRUCT: its keys ({'a': 'INTEGER'}) */
    char **vals;  /* LIST, STRUCT: its string values */
    int n;
} AstOpt;

/* A file in FROM: read_csv('f.csv', opt = value, ...), read_csv_auto(...)
 * or a string literal 'f.csv' (func NULL). libgqp loads it into a
 * temporary table (libgqp/files.c) and sets the reference's bound_name. */
typedef struct AstFileRef {
    char *func; /* "read_csv" / "read_csv_auto" as written, or NULL */
    char *path;
    int64_t path_pos;
    AstOpt *opts;
    int nopts;
} AstFileRef;

typedef struct AstTableRef {
    char *name;
    char *alias; /* or NULL */
    int64_t pos;
    AstExpr *join_on;           /* ON condition for [INNER] JOIN; NULL for comma / first */
    struct AstSelect *subquery; /* FROM (SELECT ...) [AS] alias: name is NULL */
    char *bound_name;           /* set by libgqp before binding: the catalog table that
                                   holds a CTE / view's rows (or a derived table's,
                                   when materialized), or NULL: a derived table
                                   is then bound and lowered inline */
    int join_kind;              /* AstJoinKind of the join that added this table */
    int natural;                /* NATURAL join */
    char **using_cols;          /* JOIN ... USING (cols): the names, or NULL */
    int nusing;
    int hidden;      /* made by decorrelation: its columns are found only by a
                        qualified name and are not part of SELECT * */
    char **colnames; /* FROM (SELECT ...) [AS] alias (cols): the names, or NULL */
    int ncolnames;
    AstFileRef *file; /* a file (name: its default alias, the file's stem or
                         the function's name), or NULL */
    int materialize;  /* a derived table that libgqp runs into a temporary
                         table first (a compound's arm), never inline */
} AstTableRef;

/* One WITH name [(cols)] AS (SELECT ...) of a SELECT (non-recursive). */
typedef struct AstCte {
    char *name;
    int64_t pos;
    char **colnames; /* or NULL */
    int ncolnames;
    struct AstSelect *select;
} AstCte;

/* How a FROM table is joined to the tables before it. */
typedef enum AstJoinKind {
    AST_JOIN_INNER = 0, /* comma, CROSS JOIN, [INNER] JOIN */
    AST_JOIN_LEFT = 1,  /* LEFT [OUTER] JOIN */
    AST_JOIN_RIGHT = 2, /* RIGHT [OUTER] JOIN */
    AST_JOIN_FULL = 3,  /* FULL [OUTER] JOIN */
    /* made by libgqp's decorrelation, never by the parser: keep the rows
     * of the tables before it that some row of this table matches under
     * join_on (SEMI: EXISTS), or that none matches (ANTI: NOT EXISTS);
     * this table's columns are visible only inside join_on */
    AST_JOIN_SEMI = 4,
    AST_JOIN_ANTI = 5
} AstJoinKind;

typedef struct AstOrderItem {
    AstExpr *expr;
    int desc;
    int nulls_flip; /* NULLS FIRST/LAST against the direction's order
                       (ASC NULLS LAST, DESC NULLS FIRST: SQLite sorts NULL
                       lowest, so a written NULLS that agrees is 0) */
} AstOrderItem;

/* A compound operator (SQLite: all of equal precedence, left-associative). */
typedef enum AstSetOp { SETOP_UNION, SETOP_UNION_ALL, SETOP_INTERSECT, SETOP_EXCEPT } AstSetOp;

/* One SELECT after the first of a compound, with the operator before it. */
typedef struct AstCompoundArm {
    AstSetOp op;
    int64_t pos;              /* byte offset of the operator keyword */
    struct AstSelect *select; /* its own order_by / limit are always empty */
} AstCompoundArm;

typedef struct AstSelect {
    int distinct;
    AstSelectItem *items;
    int nitems;
    AstTableRef *from; /* in the order written; JOIN ... ON folds into join_on */
    int nfrom;
    AstExpr *where;
    AstExpr **group_by;
    int ngroup;
    AstExpr *having;
    AstOrderItem *order_by;
    int norder;
    AstExpr *limit;  /* or NULL */
    AstExpr *offset; /* or NULL */
    /* compound SELECT: this SELECT op1 arm1 op2 arm2 ... (left-associative);
     * order_by / limit / offset above then apply to the whole compound */
    AstCompoundArm *compound;
    int ncompound;
    AstCte *with; /* WITH ... before this SELECT, in order; a CTE sees the ones before it */
    int nwith;
    /* made by decorrelation (libgqp/decorrelate.c), never by the parser:
     * rank_keys > 0: the last item is replaced by each row's 1-based number
     * among the rows equal on the first rank_keys ORDER BY terms, in the
     * ORDER BY's order (ROW_NUMBER() OVER (PARTITION BY .. ORDER BY ..));
     * keys_unique > 0: the first keys_unique items hold each combination
     * of values at most once */
    int rank_keys;
    int keys_unique;
} AstSelect;

typedef struct AstColumnDef {
    char *name;
    char *type_name; /* as written, e.g. "VARCHAR(40)", "INTEGER" */
    int64_t pos;
} AstColumnDef;

/* One occurrence of a bind parameter in a statement. */
typedef struct AstParamRef {
    AstExpr *expr; /* the AST_PARAM node (rewritten in place by libgqp) */
    int index;     /* 1-based parameter index */
} AstParamRef;

/* Highest bind parameter index accepted (SQLite's SQLITE_MAX_VARIABLE_NUMBER). */
#define SQL_MAX_PARAMS 32766

typedef enum AstStmtKind {
    STMT_SELECT,
    STMT_CREATE_TABLE,
    STMT_INSERT,
    STMT_DROP_TABLE,
    STMT_SET,          /* SET name = value */
    STMT_UPDATE,       /* UPDATE table SET set_cols[i] = set_exprs[i], ... [WHERE where] */
    STMT_DELETE,       /* DELETE FROM table [WHERE where] */
    STMT_CREATE_INDEX, /* CREATE [UNIQUE] INDEX [IF NOT EXISTS] index_name ON table(insert_cols) */
    STMT_DROP_INDEX,   /* DROP INDEX [IF EXISTS] index_name */
    STMT_CREATE_VIEW,  /* CREATE VIEW [IF NOT EXISTS] table [(insert_cols)] AS select
                          (its text: view_pos .. end) */
    STMT_DROP_VIEW,    /* DROP VIEW [IF EXISTS] table */
    STMT_EXPLAIN,      /* EXPLAIN [ANALYZE] inner (analyze set; inner: any statement
                          but EXPLAIN, its text inner->pos .. inner->end) */
    STMT_SHOW_TABLES,  /* SHOW TABLES */
    STMT_DESCRIBE,     /* DESCRIBE|DESC table, or DESCRIBE select */
    STMT_PRAGMA        /* PRAGMA set_name [(table) | = table] (table NULL without one) */
} AstStmtKind;

typedef struct AstStmt {
    AstStmtKind kind;
    int64_t pos, end;  /* byte range of the statement (without ';') */
    AstSelect *select; /* STMT_SELECT; STMT_INSERT ... SELECT; CREATE TABLE ... AS SELECT */
    /* CREATE TABLE / INSERT / DROP TABLE */
    char *table;
    int64_t table_pos;
    int if_not_exists; /* CREATE TABLE IF NOT EXISTS, DROP TABLE IF EXISTS */
    AstColumnDef *cols;
    int ncols;
    /* INSERT INTO t [(cols)] VALUES (row), (row)...  */
    char **insert_cols; /* or NULL for all columns in order; CREATE INDEX: its columns */
    int ninsert_cols;
    AstExpr ***rows; /* rows[r][c] */
    int64_t nrows;
    int row_width;
    /* UPDATE / DELETE */
    char **set_cols;     /* UPDATE: assigned columns */
    AstExpr **set_exprs; /* UPDATE: their new values */
    int64_t *set_pos;    /* UPDATE: byte offsets of the column names */
    int nset;
    AstExpr *where; /* UPDATE / DELETE: WHERE or NULL */
    /* CREATE INDEX / DROP INDEX (if_not_exists: IF [NOT] EXISTS) */
    char *index_name;
    int64_t index_pos;
    int unique;
    int64_t view_pos; /* CREATE VIEW, DESCRIBE SELECT: byte offset of its SELECT */
    /* SET name = value */
    char *set_name;
    AstExpr *set_value;
    /* bind parameters, numbered as SQLite does: "?" takes the largest index
     * so far + 1, "?N" is N, a name takes the index of its first use */
    int nparams;         /* largest index used */
    char **param_names;  /* [index - 1]: "?N", ":name", "$name", "@name"; NULL for "?" */
    AstParamRef *params; /* every occurrence, in text order */
    int nparam_refs;
    /* EXPLAIN [ANALYZE] */
    struct AstStmt *inner;
    int analyze;
} AstStmt;

typedef struct SqlError {
    char msg[512];  /* "syntax error at or near \"FORM\"" (no stage prefix) */
    int64_t offset; /* byte offset in the SQL text, -1 if none */
} SqlError;

/*
 * Parse the first statement of sql[start..len). On success returns 0,
 * *out is the statement (NULL if only whitespace/comments/';' remain) and
 * *next is the byte offset just past the statement's terminating ';' (or
 * len). On a syntax error returns -1 and fills err. Supported: SELECT
 * [DISTINCT] items FROM t [AS] a, ... [[INNER] JOIN t ON expr]... [WHERE]
 * [GROUP BY] [HAVING] [ORDER BY e [ASC|DESC], ...] [LIMIT n [OFFSET m]]
 * (also LIMIT m, n), SELECT without FROM, compound SELECTs (core
 * {UNION [ALL] | INTERSECT | EXCEPT} core ... [ORDER BY] [LIMIT]; an ORDER
 * BY or LIMIT before a compound operator is an error, as in SQLite), CREATE TABLE [IF NOT EXISTS]
 * t(col type [constraints ignored: PRIMARY KEY, NOT NULL, UNIQUE, DEFAULT
 * lit]...), INSERT INTO t [(cols)] VALUES (...), (...), INSERT INTO t
 * SELECT ..., DROP TABLE [IF EXISTS] t, SET name = value, CREATE TABLE t
 * AS SELECT ..., UPDATE t SET c = e, ... [WHERE e], DELETE FROM t [WHERE
 * e], CREATE [UNIQUE] INDEX [IF NOT EXISTS] i ON t(c [ASC|DESC], ...),
 * DROP INDEX [IF EXISTS] i, EXPLAIN [ANALYZE] statement (not EXPLAIN
 * again), SHOW TABLES, DESCRIBE|DESC table, DESCRIBE SELECT ..., PRAGMA
 * name [(arg) | = arg] (arg a name or a string).
 * An AND / OR chain is built as a balanced tree of binary nodes (its terms
 * in order, left to right), other operators left-deep; an expression tree
 * deeper than SQL_MAX_EXPR_DEPTH is an error.
 * Expression precedence (low to high): OR; AND; NOT; = <> != < <= > >= IS
 * [NOT] NULL, [NOT] BETWEEN, [NOT] IN, [NOT] LIKE; + - ||; * / %; unary - +;
 * primary.
 */
int sql_parse_one(const char *sql, int64_t len, int64_t start, SqlArena *arena, AstStmt **out,
                  int64_t *next, SqlError *err);

/*
 * Format a positioned error the way DuckDB does:
 *
 *   <stage> Error: <msg>
 *   LINE <n>: <the line of sql holding offset>
 *             ^   (caret under the byte at offset)
 *
 * (long lines are clipped around the offset). offset < 0 prints only the
 * first line. Writes at most cap bytes (NUL-terminated) into buf.
 */
void sql_format_error(const char *sql, int64_t len, int64_t offset, const char *stage,
                      const char *msg, char *buf, size_t cap);

/* Text of an expression as written (sql[e->pos .. e->end)), for column
 * names; arena-allocated. */
char *sql_expr_text(SqlArena *a, const char *sql, const AstExpr *e);

#endif /* GQP_SQLFRONT_H */
