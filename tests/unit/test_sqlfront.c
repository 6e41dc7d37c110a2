/*
 * test_sqlfront.c -- unit tests of the tokenizer, parser, AST positions and
 * positioned errors. Expected values come from the SQL standard / SQLite /
 * PostgreSQL (DuckDB) behaviour named at each test, never from gqp output.
 */
#include "sqlfront/sqlfront.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

/* Parses sql, which must hold exactly one statement; fails the test
 * otherwise. The statement lives in *arena (caller frees). */
static AstStmt *parse1(SqlArena **arena, const char *sql) {
    *arena = sql_arena_new();
    cr_assert_not_null(*arena);
    AstStmt *st = NULL;
    int64_t next = -1;
    SqlError err;
    int64_t len = (int64_t)strlen(sql);
    int rc = sql_parse_one(sql, len, 0, *arena, &st, &next, &err);
    cr_assert_eq(rc, 0, "parse failed: %s at %lld in: %s", err.msg, (long long)err.offset, sql);
    cr_assert_not_null(st, "no statement in: %s", sql);
    return st;
}

/* Parses a one-statement SELECT and returns its AstSelect. */
static AstSelect *sel1(SqlArena **arena, const char *sql) {
    AstStmt *st = parse1(arena, sql);
    cr_assert_eq(st->kind, STMT_SELECT);
    cr_assert_not_null(st->select);
    return st->select;
}

/* Parses sql expecting a syntax error; returns it in *err. */
static void parse_fails(const char *sql, SqlError *err) {
    SqlArena *a = sql_arena_new();
    AstStmt *st = NULL;
    int64_t next;
    int rc = sql_parse_one(sql, (int64_t)strlen(sql), 0, a, &st, &next, err);
    cr_assert_eq(rc, -1, "expected an error for: %s", sql);
    sql_arena_free(a);
}

/* Returns the source text of e (must equal `want`). */
static void expect_text(SqlArena *a, const char *sql, const AstExpr *e, const char *want) {
    char *t = sql_expr_text(a, sql, e);
    cr_assert_not_null(t);
    cr_assert_str_eq(t, want);
}

/* Asserts e is a column reference named name (table qualifier tbl or NULL). */
static void expect_col(const AstExpr *e, const char *tbl, const char *name) {
    cr_assert_not_null(e);
    cr_assert_eq(e->kind, AST_COLUMN, "kind %d is not a column", e->kind);
    cr_assert_str_eq(e->str, name);
    if (tbl)
        cr_assert_str_eq(e->table, tbl);
    else
        cr_assert_null(e->table);
}

/* Asserts e is the integer literal v. */
static void expect_int(const AstExpr *e, int64_t v) {
    cr_assert_not_null(e);
    cr_assert_eq(e->kind, AST_INT, "kind %d is not an integer", e->kind);
    cr_assert_eq(e->ival, v);
}

/* Asserts e is a binary node with operator op. */
static void expect_bin(const AstExpr *e, AstOp op) {
    cr_assert_not_null(e);
    cr_assert_eq(e->kind, AST_BINARY, "kind %d is not binary", e->kind);
    cr_assert_eq(e->op, op, "op %d, want %d", e->op, op);
}

/* Appends the terms of the op (AND / OR) tree e to out[0..cap), left to
 * right, counting them in *n. */
static void collect_chain(AstExpr *e, AstOp op, AstExpr **out, int cap, int *n) {
    if (e->kind == AST_BINARY && e->op == op) {
        collect_chain(e->a, op, out, cap, n);
        collect_chain(e->b, op, out, cap, n);
        return;
    }
    cr_assert_lt(*n, cap);
    out[(*n)++] = e;
}

/* ---- tokenizer ---- */

Test(tokenize, kinds_and_positions) {
    const char *sql = "SELECT a1, 'it''s', 1.5, .5, 1e3, 42 FROM \"Weird Name\" WHERE x<>y||z";
    struct {
        SqlTokKind kind;
        const char *text;
    } want[] = {{TK_IDENT, "SELECT"}, {TK_IDENT, "a1"},
                {TK_OP, ","},         {TK_STRING, "'it''s'"},
                {TK_OP, ","},         {TK_FLOAT, "1.5"},
                {TK_OP, ","},         {TK_FLOAT, ".5"},
                {TK_OP, ","},         {TK_FLOAT, "1e3"},
                {TK_OP, ","},         {TK_INTEGER, "42"},
                {TK_IDENT, "FROM"},   {TK_IDENT, "\"Weird Name\""},
                {TK_IDENT, "WHERE"},  {TK_IDENT, "x"},
                {TK_OP, "<>"},        {TK_IDENT, "y"},
                {TK_OP, "||"},        {TK_IDENT, "z"},
                {TK_EOF, ""}};
    int64_t len = (int64_t)strlen(sql), pos = 0;
    const char *search = sql;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        SqlToken t = sql_next_token(sql, len, pos);
        cr_assert_eq(t.kind, want[i].kind, "token %zu kind %d", i, t.kind);
        int64_t expect_pos = want[i].kind == TK_EOF ? len : strstr(search, want[i].text) - sql;
        cr_assert_eq(t.pos, expect_pos, "token %zu at %lld", i, (long long)t.pos);
        cr_assert_eq(t.len, (int64_t)strlen(want[i].text), "token %zu len", i);
        cr_assert_eq(t.quoted, want[i].text[0] == '"', "token %zu quoted", i);
        search = sql + t.pos + t.len;
        pos = t.pos + t.len;
    }
}

Test(tokenize, comments_and_crlf) {
    const char *sql = "-- lead\r\nSELECT /* a\r\n b */ x -- tail\r\n\r\n  ;";
    int64_t len = (int64_t)strlen(sql);
    SqlToken t = sql_next_token(sql, len, 0);
    cr_assert_eq(t.kind, TK_IDENT);
    cr_assert_eq(t.pos, 9); /* "-- lead\r\n" is 9 bytes */
    t = sql_next_token(sql, len, t.pos + t.len);
    cr_assert_eq(t.kind, TK_IDENT);
    cr_assert_eq(t.pos, (int64_t)(strstr(sql, " x ") - sql) + 1);
    t = sql_next_token(sql, len, t.pos + t.len);
    cr_assert_eq(t.kind, TK_OP);
    cr_assert_eq(t.pos, len - 1);
    t = sql_next_token(sql, len, t.pos + t.len);
    cr_assert_eq(t.kind, TK_EOF);
    cr_assert_eq(t.pos, len);
}

Test(tokenize, errors) {
    const char *s1 = "x /* never closed";
    SqlToken t = sql_next_token(s1, (int64_t)strlen(s1), 1);
    cr_assert_eq(t.kind, TK_ERROR);
    cr_assert_eq(t.pos, 2);
    const char *s2 = "  'abc";
    t = sql_next_token(s2, (int64_t)strlen(s2), 0);
    cr_assert_eq(t.kind, TK_ERROR);
    cr_assert_eq(t.pos, 2);
    const char *s3 = "#";
    t = sql_next_token(s3, 1, 0);
    cr_assert_eq(t.kind, TK_ERROR);
    cr_assert_eq(t.len, 1);
    /* "1e" is the integer 1 followed by the identifier e */
    const char *s4 = "1e";
    t = sql_next_token(s4, 2, 0);
    cr_assert_eq(t.kind, TK_INTEGER);
    cr_assert_eq(t.len, 1);
    /* the length bounds the scan: "12" with len 1 is "1" */
    t = sql_next_token("12", 1, 0);
    cr_assert_eq(t.kind, TK_INTEGER);
    cr_assert_eq(t.len, 1);
}

/* ---- seed 004 queries ---- */

Test(parse, seed004_filters) {
    SqlArena *a;
    const char *q1 = "SELECT id, uniformi, normali5 FROM test WHERE uniformi > 60 AND normali5 < 0";
    AstSelect *s = sel1(&a, q1);
    cr_assert_eq(s->nitems, 3);
    expect_col(s->items[0].expr, NULL, "id");
    expect_col(s->items[2].expr, NULL, "normali5");
    cr_assert_eq(s->nfrom, 1);
    cr_assert_str_eq(s->from[0].name, "test");
    cr_assert_eq(s->from[0].pos, 35);
    expect_bin(s->where, OP_AND);
    expect_bin(s->where->a, OP_GT);
    expect_col(s->where->a->a, NULL, "uniformi");
    expect_int(s->where->a->b, 60);
    expect_bin(s->where->b, OP_LT);
    expect_text(a, q1, s->where, "uniformi > 60 AND normali5 < 0");
    sql_arena_free(a);

    const char *q2 =
        "SELECT id, normali5, normali20 FROM test WHERE (normali20 + 40) > (uniformi - 10)";
    s = sel1(&a, q2);
    expect_bin(s->where, OP_GT);
    expect_bin(s->where->a, OP_ADD);
    expect_bin(s->where->b, OP_SUB);
    expect_text(a, q2, s->where->a, "(normali20 + 40)");
    expect_text(a, q2, s->where->b, "(uniformi - 10)");
    sql_arena_free(a);

    const char *q3 =
        "SELECT id, normali5, normali20 FROM test WHERE normali5 * normali20 BETWEEN -5 AND 5";
    s = sel1(&a, q3);
    cr_assert_eq(s->where->kind, AST_BETWEEN);
    cr_assert_eq(s->where->negated, 0);
    expect_bin(s->where->a, OP_MUL);
    cr_assert_eq(s->where->b->kind, AST_UNARY);
    cr_assert_eq(s->where->b->op, OP_NEG);
    expect_int(s->where->b->a, 5);
    expect_int(s->where->c, 5);
    expect_text(a, q3, s->where, "normali5 * normali20 BETWEEN -5 AND 5");
    sql_arena_free(a);

    const char *q4 = "SELECT id, uniformi, normali5, normali20 FROM test WHERE NOT uniformi OR "
                     "NOT normali5 OR NOT normali20";
    s = sel1(&a, q4);
    cr_assert_eq(s->nitems, 4);
    expect_bin(s->where, OP_OR); /* ((NOT u OR NOT n5) OR NOT n20) */
    expect_bin(s->where->a, OP_OR);
    cr_assert_eq(s->where->b->kind, AST_UNARY);
    cr_assert_eq(s->where->b->op, OP_NOT);
    expect_col(s->where->b->a, NULL, "normali20");
    cr_assert_eq(s->where->a->a->op, OP_NOT);
    expect_col(s->where->a->a->a, NULL, "uniformi");
    sql_arena_free(a);
}

Test(parse, seed004_aggregates) {
    SqlArena *a;
    const char *q5 = "SELECT SUM(normalf20) FROM test";
    AstSelect *s = sel1(&a, q5);
    AstExpr *f = s->items[0].expr;
    cr_assert_eq(f->kind, AST_FUNC);
    cr_assert_str_eq(f->str, "SUM");
    cr_assert_eq(f->nlist, 1);
    expect_col(f->list[0], NULL, "normalf20");
    expect_text(a, q5, f, "SUM(normalf20)");
    cr_assert_null(s->where);
    sql_arena_free(a);

    s = sel1(&a, "SELECT AVG(uniformi) FROM test WHERE uniformi > 0");
    cr_assert_str_eq(s->items[0].expr->str, "AVG");
    expect_bin(s->where, OP_GT);
    sql_arena_free(a);

    const char *q7 = "SELECT MAX(normali5), MIN(normali5) FROM test";
    s = sel1(&a, q7);
    cr_assert_eq(s->nitems, 2);
    cr_assert_str_eq(s->items[0].expr->str, "MAX");
    cr_assert_str_eq(s->items[1].expr->str, "MIN");
    expect_text(a, q7, s->items[1].expr, "MIN(normali5)");
    sql_arena_free(a);
}

/* ---- select lists, FROM and clauses ---- */

Test(parse, select_list_forms) {
    SqlArena *a;
    const char *q = "SELECT ALL *, t.*, a + b AS s, c d, COUNT(*), COUNT(DISTINCT x), "
                    "\"from\" FROM t";
    AstSelect *s = sel1(&a, q);
    cr_assert_eq(s->distinct, 0);
    cr_assert_eq(s->nitems, 7);
    cr_assert_eq(s->items[0].expr->kind, AST_STAR);
    cr_assert_null(s->items[0].expr->table);
    cr_assert_eq(s->items[1].expr->kind, AST_STAR);
    cr_assert_str_eq(s->items[1].expr->table, "t");
    cr_assert_str_eq(s->items[2].alias, "s");
    expect_text(a, q, s->items[2].expr, "a + b");
    cr_assert_str_eq(s->items[3].alias, "d");
    AstExpr *cnt = s->items[4].expr;
    cr_assert_eq(cnt->kind, AST_FUNC);
    cr_assert_eq(cnt->nlist, 1);
    cr_assert_eq(cnt->list[0]->kind, AST_STAR);
    expect_text(a, q, cnt, "COUNT(*)");
    cr_assert_eq(s->items[5].expr->distinct, 1);
    expect_col(s->items[6].expr, NULL, "from"); /* quoted: never a keyword */
    cr_assert_null(s->items[6].alias);
    sql_arena_free(a);

    s = sel1(&a, "select distinct 1");
    cr_assert_eq(s->distinct, 1);
    cr_assert_eq(s->nfrom, 0);
    expect_int(s->items[0].expr, 1);
    sql_arena_free(a);
}

Test(parse, joins) {
    SqlArena *a;
    const char *q = "SELECT * FROM t1 AS x JOIN t2 y ON x.a = y.b INNER JOIN t3 ON t3.c = y.b, "
                    "t4 CROSS JOIN t5";
    AstSelect *s = sel1(&a, q);
    cr_assert_eq(s->nfrom, 5);
    cr_assert_str_eq(s->from[0].name, "t1");
    cr_assert_str_eq(s->from[0].alias, "x");
    cr_assert_null(s->from[0].join_on);
    cr_assert_str_eq(s->from[1].alias, "y");
    expect_bin(s->from[1].join_on, OP_EQ);
    expect_col(s->from[1].join_on->a, "x", "a");
    expect_text(a, q, s->from[1].join_on, "x.a = y.b");
    cr_assert_null(s->from[2].alias);
    expect_text(a, q, s->from[2].join_on, "t3.c = y.b");
    cr_assert_null(s->from[3].join_on);
    cr_assert_null(s->from[4].join_on);
    cr_assert_eq(s->from[4].pos, (int64_t)(strstr(q, "t5") - q));
    sql_arena_free(a);

    /* SQLite accepts a parenthesized join in FROM (random/aggregates) */
    s = sel1(&a, "SELECT COUNT( * ) FROM ( tab0 AS cor0 CROSS JOIN tab0 cor1 )");
    cr_assert_eq(s->nfrom, 2);
    cr_assert_str_eq(s->from[1].alias, "cor1");
    sql_arena_free(a);
}

Test(parse, clauses) {
    SqlArena *a;
    AstSelect *s = sel1(&a, "SELECT g, SUM(v) FROM t WHERE v > 1 GROUP BY g, h HAVING SUM(v) > 2 "
                            "ORDER BY 2 DESC, g ASC, h LIMIT 10 OFFSET 5");
    cr_assert_eq(s->ngroup, 2);
    expect_col(s->group_by[1], NULL, "h");
    expect_bin(s->having, OP_GT);
    cr_assert_eq(s->norder, 3);
    expect_int(s->order_by[0].expr, 2);
    cr_assert_eq(s->order_by[0].desc, 1);
    cr_assert_eq(s->order_by[1].desc, 0);
    cr_assert_eq(s->order_by[2].desc, 0);
    expect_int(s->limit, 10);
    expect_int(s->offset, 5);
    sql_arena_free(a);

    /* SQLite: LIMIT m, n skips m rows and returns n */
    s = sel1(&a, "SELECT x FROM t LIMIT 3, 7");
    expect_int(s->offset, 3);
    expect_int(s->limit, 7);
    sql_arena_free(a);

    s = sel1(&a, "SELECT x FROM t LIMIT 4");
    expect_int(s->limit, 4);
    cr_assert_null(s->offset);
    sql_arena_free(a);
}

/* ---- expressions ---- */

Test(parse, case_cast_in_between_like_isnull) {
    SqlArena *a;
    const char *q = "SELECT CASE WHEN a > 1 THEN 'x' WHEN a < 0 THEN 'y' ELSE NULL END, "
                    "CASE b WHEN 1 THEN 2 END, CAST(c AS VARCHAR(10)), CAST ( d AS REAL ) "
                    "FROM t WHERE e IN (1, 2, 3) AND f NOT IN (4) AND g BETWEEN 1 AND 2 AND "
                    "h NOT BETWEEN 3 AND 4 AND i LIKE 'a%' AND j NOT LIKE '_b' AND k IS NULL "
                    "AND l IS NOT NULL";
    AstSelect *s = sel1(&a, q);
    AstExpr *c1 = s->items[0].expr;
    cr_assert_eq(c1->kind, AST_CASE);
    cr_assert_null(c1->a);
    cr_assert_eq(c1->nlist, 4);
    expect_bin(c1->list[0], OP_GT);
    cr_assert_str_eq(c1->list[1]->str, "x");
    cr_assert_eq(c1->b->kind, AST_NULL);
    expect_text(a, q, c1, "CASE WHEN a > 1 THEN 'x' WHEN a < 0 THEN 'y' ELSE NULL END");
    AstExpr *c2 = s->items[1].expr;
    expect_col(c2->a, NULL, "b");
    cr_assert_eq(c2->nlist, 2);
    cr_assert_null(c2->b);
    AstExpr *k1 = s->items[2].expr;
    cr_assert_eq(k1->kind, AST_CAST);
    cr_assert_str_eq(k1->str, "VARCHAR(10)");
    expect_col(k1->a, NULL, "c");
    cr_assert_str_eq(s->items[3].expr->str, "REAL");
    expect_text(a, q, s->items[3].expr, "CAST ( d AS REAL )");

    /* WHERE is a balanced AND tree of 8 predicates, in order */
    AstExpr *preds[8];
    int npreds = 0;
    collect_chain(s->where, OP_AND, preds, 8, &npreds);
    cr_assert_eq(npreds, 8);
    cr_assert_eq(s->where->height, 5, "3 levels of AND over the deepest predicate (2)");
    cr_assert_eq(preds[0]->kind, AST_IN);
    cr_assert_eq(preds[0]->nlist, 3);
    cr_assert_eq(preds[0]->negated, 0);
    expect_int(preds[0]->list[2], 3);
    cr_assert_eq(preds[1]->kind, AST_IN);
    cr_assert_eq(preds[1]->negated, 1);
    cr_assert_eq(preds[2]->kind, AST_BETWEEN);
    cr_assert_eq(preds[2]->negated, 0);
    cr_assert_eq(preds[3]->kind, AST_BETWEEN);
    cr_assert_eq(preds[3]->negated, 1);
    expect_text(a, q, preds[3], "h NOT BETWEEN 3 AND 4");
    cr_assert_eq(preds[4]->kind, AST_LIKE);
    cr_assert_str_eq(preds[4]->b->str, "a%");
    cr_assert_eq(preds[5]->kind, AST_LIKE);
    cr_assert_eq(preds[5]->negated, 1);
    cr_assert_eq(preds[6]->kind, AST_ISNULL);
    cr_assert_eq(preds[6]->negated, 0);
    cr_assert_eq(preds[7]->kind, AST_ISNULL);
    cr_assert_eq(preds[7]->negated, 1);
    expect_text(a, q, preds[7], "l IS NOT NULL");
    sql_arena_free(a);
}

Test(parse, precedence) {
    SqlArena *a;
    AstSelect *s = sel1(&a, "SELECT 1+2*3, NOT a = b, a OR b AND c, 1-2-3, -x*y, a||b||c FROM t");
    AstExpr *e = s->items[0].expr; /* 1 + (2*3) */
    expect_bin(e, OP_ADD);
    expect_int(e->a, 1);
    expect_bin(e->b, OP_MUL);
    e = s->items[1].expr; /* NOT (a = b) */
    cr_assert_eq(e->kind, AST_UNARY);
    cr_assert_eq(e->op, OP_NOT);
    expect_bin(e->a, OP_EQ);
    e = s->items[2].expr; /* a OR (b AND c) */
    expect_bin(e, OP_OR);
    expect_col(e->a, NULL, "a");
    expect_bin(e->b, OP_AND);
    e = s->items[3].expr; /* (1-2)-3 */
    expect_bin(e, OP_SUB);
    expect_bin(e->a, OP_SUB);
    expect_int(e->b, 3);
    e = s->items[4].expr; /* (-x)*y */
    expect_bin(e, OP_MUL);
    cr_assert_eq(e->a->kind, AST_UNARY);
    cr_assert_eq(e->a->op, OP_NEG);
    e = s->items[5].expr; /* (a||b)||c */
    expect_bin(e, OP_CONCAT);
    expect_bin(e->a, OP_CONCAT);
    sql_arena_free(a);
}

/* SQLite's precedence table (parse.y, lowest first): OR; AND; NOT; = == <>
 * != IS IN LIKE BETWEEN ISNULL NOTNULL; < <= > >=; + -; * / %; ||; unary
 * - + (issue 13 item 15). */
Test(parse, precedence_sqlite_levels) {
    SqlArena *a;
    AstSelect *s = sel1(&a, "SELECT i = 1 < 2, 1 < 2 = 1, 2 * 3 || 4, x BETWEEN 1 AND 2 < 3, "
                            "a = b IS NULL, x NOT NULL, a < b IN (1), NOT a < b, - a || b, "
                            "a LIKE b < c FROM t");
    AstExpr *e = s->items[0].expr; /* i = (1 < 2) */
    expect_bin(e, OP_EQ);
    expect_col(e->a, NULL, "i");
    expect_bin(e->b, OP_LT);
    e = s->items[1].expr; /* (1 < 2) = 1 */
    expect_bin(e, OP_EQ);
    expect_bin(e->a, OP_LT);
    expect_int(e->b, 1);
    e = s->items[2].expr; /* 2 * (3 || 4) */
    expect_bin(e, OP_MUL);
    expect_bin(e->b, OP_CONCAT);
    e = s->items[3].expr; /* x BETWEEN 1 AND (2 < 3) */
    cr_assert_eq(e->kind, AST_BETWEEN);
    expect_bin(e->c, OP_LT);
    e = s->items[4].expr; /* (a = b) IS NULL */
    cr_assert_eq(e->kind, AST_ISNULL);
    expect_bin(e->a, OP_EQ);
    e = s->items[5].expr; /* x NOT NULL is x NOTNULL */
    cr_assert_eq(e->kind, AST_ISNULL);
    cr_assert_eq(e->negated, 1);
    e = s->items[6].expr; /* (a < b) IN (1) */
    cr_assert_eq(e->kind, AST_IN);
    expect_bin(e->a, OP_LT);
    e = s->items[7].expr; /* NOT (a < b) */
    cr_assert_eq(e->kind, AST_UNARY);
    expect_bin(e->a, OP_LT);
    e = s->items[8].expr; /* (-a) || b */
    expect_bin(e, OP_CONCAT);
    cr_assert_eq(e->a->kind, AST_UNARY);
    e = s->items[9].expr; /* a LIKE (b < c) */
    cr_assert_eq(e->kind, AST_LIKE);
    expect_bin(e->b, OP_LT);
    sql_arena_free(a);
    /* after a postfix form, a tighter operator applies to all before it;
     * IS takes an operand of the next level */
    s = sel1(&a,
             "SELECT x IN (1) < 2, x NOTNULL / 2, x IS NULL + 1, x IS NOT y, x IS NULL = 0 FROM t");
    e = s->items[0].expr; /* (x IN (1)) < 2 */
    expect_bin(e, OP_LT);
    cr_assert_eq(e->a->kind, AST_IN);
    e = s->items[1].expr; /* (x NOTNULL) / 2 */
    expect_bin(e, OP_DIV);
    cr_assert_eq(e->a->kind, AST_ISNULL);
    e = s->items[2].expr; /* x IS (NULL + 1) */
    cr_assert_eq(e->kind, AST_ISNULL);
    expect_bin(e->b, OP_ADD);
    e = s->items[3].expr; /* x IS NOT y */
    cr_assert_eq(e->kind, AST_ISNULL);
    cr_assert_eq(e->negated, 1);
    expect_col(e->b, NULL, "y");
    e = s->items[4].expr; /* (x IS NULL) = 0 */
    expect_bin(e, OP_EQ);
    cr_assert_eq(e->a->kind, AST_ISNULL);
    cr_assert_null(e->a->b);
    sql_arena_free(a);
}

Test(parse, literals) {
    SqlArena *a;
    AstSelect *s = sel1(&a, "SELECT 9223372036854775807, 9223372036854775808, "
                            "-9223372036854775808, 1.25, 'it''s', TRUE, false, NULL, "
                            "DATE '1992-01-01', date '1969-12-31', DATE '2000-02-29', 0x10");
    expect_int(s->items[0].expr, INT64_MAX);
    cr_assert_eq(s->items[1].expr->kind, AST_FLOAT); /* SQLite: overflow -> REAL */
    cr_assert_float_eq(s->items[1].expr->fval, 9223372036854775808.0, 1.0);
    expect_int(s->items[2].expr, INT64_MIN);
    cr_assert_eq(s->items[3].expr->kind, AST_FLOAT);
    cr_assert_float_eq(s->items[3].expr->fval, 1.25, 1e-12);
    cr_assert_str_eq(s->items[4].expr->str, "it's");
    cr_assert_eq(s->items[5].expr->kind, AST_BOOL);
    cr_assert_eq(s->items[5].expr->ival, 1);
    cr_assert_eq(s->items[6].expr->ival, 0);
    cr_assert_eq(s->items[7].expr->kind, AST_NULL);
    /* days since 1970-01-01, from Python's datetime */
    cr_assert_eq(s->items[8].expr->kind, AST_DATE);
    cr_assert_eq(s->items[8].expr->ival, 8035);
    cr_assert_str_eq(s->items[8].expr->str, "1992-01-01");
    cr_assert_eq(s->items[9].expr->ival, -1);
    cr_assert_eq(s->items[10].expr->ival, 11016);
    expect_int(s->items[11].expr, 16);
    sql_arena_free(a);
}

/* ---- other statements ---- */

Test(parse, create_table) {
    SqlArena *a;
    const char *q = "CREATE TABLE IF NOT EXISTS t1(\r\n  a1 INTEGER PRIMARY KEY,\r\n"
                    "  b1 INTEGER NOT NULL DEFAULT -1,\r\n  x1 VARCHAR(40) UNIQUE NULL,\r\n"
                    "  d DECIMAL(10, 2) DEFAULT 'z'\r\n)";
    AstStmt *st = parse1(&a, q);
    cr_assert_eq(st->kind, STMT_CREATE_TABLE);
    cr_assert_str_eq(st->table, "t1");
    cr_assert_eq(st->table_pos, 27);
    cr_assert_eq(st->if_not_exists, 1);
    cr_assert_eq(st->ncols, 4);
    cr_assert_str_eq(st->cols[0].name, "a1");
    cr_assert_str_eq(st->cols[0].type_name, "INTEGER");
    cr_assert_str_eq(st->cols[1].type_name, "INTEGER");
    cr_assert_str_eq(st->cols[2].name, "x1");
    cr_assert_str_eq(st->cols[2].type_name, "VARCHAR(40)");
    cr_assert_str_eq(st->cols[3].type_name, "DECIMAL(10, 2)");
    cr_assert_eq(st->cols[2].pos, (int64_t)(strstr(q, "x1") - q));
    cr_assert_eq(st->end, (int64_t)strlen(q));
    sql_arena_free(a);

    st = parse1(&a, "drop table if exists t1");
    cr_assert_eq(st->kind, STMT_DROP_TABLE);
    cr_assert_eq(st->if_not_exists, 1);
    cr_assert_str_eq(st->table, "t1");
    sql_arena_free(a);

    st = parse1(&a, "SET device = 'gpu'");
    cr_assert_eq(st->kind, STMT_SET);
    cr_assert_str_eq(st->set_name, "device");
    cr_assert_str_eq(st->set_value->str, "gpu");
    sql_arena_free(a);
}

Test(parse, insert) {
    SqlArena *a;
    AstStmt *st = parse1(&a, "INSERT INTO t1 VALUES(1,-2,'a'), (3, 4, NULL),(5,6,'c')");
    cr_assert_eq(st->kind, STMT_INSERT);
    cr_assert_str_eq(st->table, "t1");
    cr_assert_null(st->insert_cols);
    cr_assert_eq(st->nrows, 3);
    cr_assert_eq(st->row_width, 3);
    expect_int(st->rows[0][0], 1);
    cr_assert_eq(st->rows[0][1]->kind, AST_UNARY); /* the binder folds -2 */
    cr_assert_eq(st->rows[1][2]->kind, AST_NULL);
    cr_assert_str_eq(st->rows[2][2]->str, "c");
    sql_arena_free(a);

    st = parse1(&a, "INSERT INTO t (b, a) VALUES (1, 2)");
    cr_assert_eq(st->ninsert_cols, 2);
    cr_assert_str_eq(st->insert_cols[0], "b");
    sql_arena_free(a);

    st = parse1(&a, "INSERT INTO t SELECT * FROM u");
    cr_assert_not_null(st->select);
    cr_assert_str_eq(st->select->from[0].name, "u");
    sql_arena_free(a);

    SqlError err;
    parse_fails("INSERT INTO t VALUES (1, 2), (3)", &err);
    cr_assert_str_eq(err.msg, "VALUES lists must all be the same length");
    cr_assert_eq(err.offset, 29);
}

Test(parse, update_delete_index_ctas) {
    SqlArena *a;
    AstStmt *st = parse1(&a, "UPDATE t SET a = a + 1, b = 'x' WHERE c IS NULL");
    cr_assert_eq(st->kind, STMT_UPDATE);
    cr_assert_str_eq(st->table, "t");
    cr_assert_eq(st->nset, 2);
    cr_assert_str_eq(st->set_cols[1], "b");
    cr_assert_eq(st->set_pos[1], 24);
    expect_bin(st->set_exprs[0], OP_ADD);
    cr_assert_eq(st->where->kind, AST_ISNULL);
    sql_arena_free(a);

    st = parse1(&a, "DELETE FROM t");
    cr_assert_eq(st->kind, STMT_DELETE);
    cr_assert_null(st->where);
    sql_arena_free(a);

    st = parse1(&a, "CREATE UNIQUE INDEX IF NOT EXISTS i ON t(a DESC, b)");
    cr_assert_eq(st->kind, STMT_CREATE_INDEX);
    cr_assert(st->unique && st->if_not_exists);
    cr_assert_str_eq(st->index_name, "i");
    cr_assert_str_eq(st->table, "t");
    cr_assert_eq(st->ninsert_cols, 2);
    cr_assert_str_eq(st->insert_cols[1], "b");
    sql_arena_free(a);

    st = parse1(&a, "DROP INDEX IF EXISTS i");
    cr_assert_eq(st->kind, STMT_DROP_INDEX);
    cr_assert(st->if_not_exists);
    cr_assert_str_eq(st->index_name, "i");
    sql_arena_free(a);

    st = parse1(&a, "CREATE TABLE c AS SELECT a FROM t");
    cr_assert_eq(st->kind, STMT_CREATE_TABLE);
    cr_assert_not_null(st->select);
    sql_arena_free(a);

    SqlError err;
    parse_fails("UPDATE t SET WHERE a = 1", &err);
    parse_fails("DELETE t", &err);
    parse_fails("CREATE INDEX i ON t()", &err);
}

Test(parse, multiple_statements) {
    const char *sql = "-- setup\n;;SELECT 1; /* two */ SELECT 'a;b' ;\r\n;  -- done\n";
    int64_t len = (int64_t)strlen(sql), pos = 0, next;
    SqlArena *a = sql_arena_new();
    AstStmt *st;
    SqlError err;
    cr_assert_eq(sql_parse_one(sql, len, pos, a, &st, &next, &err), 0);
    cr_assert_not_null(st);
    cr_assert_eq(st->pos, (int64_t)(strstr(sql, "SELECT 1") - sql));
    cr_assert_eq(st->end, st->pos + 8);
    cr_assert_eq(next, st->end + 1);
    pos = next;
    cr_assert_eq(sql_parse_one(sql, len, pos, a, &st, &next, &err), 0);
    cr_assert_not_null(st);
    cr_assert_str_eq(st->select->items[0].expr->str, "a;b");
    cr_assert_eq(next, (int64_t)(strstr(sql, " ;\r\n") - sql) + 2);
    pos = next;
    cr_assert_eq(sql_parse_one(sql, len, pos, a, &st, &next, &err), 0);
    cr_assert_null(st);
    cr_assert_eq(next, len);
    sql_arena_free(a);
}

/* ---- errors ---- */

Test(errors, positions_and_messages) {
    SqlError err;
    parse_fails("SELECT id FORM test", &err);
    cr_assert_str_eq(err.msg, "syntax error at or near \"FORM\"");
    cr_assert_eq(err.offset, 10);

    const char *eoi = "SELECT * FROM  ";
    parse_fails(eoi, &err);
    cr_assert_str_eq(err.msg, "syntax error at end of input");
    cr_assert_eq(err.offset, (int64_t)strlen(eoi));

    /* PostgreSQL: unterminated quoted string at or near "'abc" */
    parse_fails("SELECT x FROM t WHERE s = 'abc", &err);
    cr_assert_str_eq(err.msg, "unterminated quoted string at or near \"'abc\"");
    cr_assert_eq(err.offset, 26);

    parse_fails("SELECT 1 /* open", &err);
    cr_assert_eq(err.offset, 9);
    cr_assert_str_eq(err.msg, "unterminated /* comment at or near \"/* open\"");

    parse_fails("SELECT DATE '1999-02-29'", &err);
    cr_assert_eq(err.offset, 12);

    parse_fails("SELECT a FROM t WHERE", &err);
    cr_assert_str_eq(err.msg, "syntax error at end of input");

    /* a bare alias followed by more words is reported as the bad word */
    parse_fails("SELECT a b c FROM t", &err);
    cr_assert_str_eq(err.msg, "syntax error at or near \"b\"");
    cr_assert_eq(err.offset, 9);
    parse_fails("SELECT * FROM test WEHRE x = 1", &err);
    cr_assert_str_eq(err.msg, "syntax error at or near \"WEHRE\"");
    cr_assert_eq(err.offset, 19);

    parse_fails("SELECT (1 + 2 FROM t", &err);
    cr_assert_eq(err.offset, 14);

    parse_fails("WITH RECURSIVE r AS (SELECT 1) SELECT * FROM r", &err);
    cr_assert_eq(err.offset, 5);
}

Test(errors, deep_nesting_is_an_error_not_a_crash) {
    size_t n = 200000;
    char *sql = malloc(n + 16);
    cr_assert_not_null(sql);
    strcpy(sql, "SELECT ");
    memset(sql + 7, '(', n);
    strcpy(sql + 7 + n, "1");
    SqlError err;
    parse_fails(sql, &err);
    cr_assert_geq(err.offset, 7);
    free(sql);
}

Test(errors, format_with_caret) {
    const char *sql = "-- first line\r\nSELECT id FORM test\r\n";
    SqlError err;
    parse_fails(sql, &err);
    char buf[512];
    sql_format_error(sql, (int64_t)strlen(sql), err.offset, "Parser", err.msg, buf, sizeof buf);
    /* DuckDB's layout: the caret sits under F of FORM */
    cr_assert_str_eq(buf, "Parser Error: syntax error at or near \"FORM\"\n"
                          "LINE 2: SELECT id FORM test\n"
                          "                  ^");

    sql_format_error(sql, (int64_t)strlen(sql), -1, "Binder", "oops", buf, sizeof buf);
    cr_assert_str_eq(buf, "Binder Error: oops");

    sql_format_error("SELECT", 6, 6, "Parser", "syntax error at end of input", buf, sizeof buf);
    cr_assert_str_eq(buf, "Parser Error: syntax error at end of input\n"
                          "LINE 1: SELECT\n"
                          "              ^");

    char small[8];
    sql_format_error(sql, (int64_t)strlen(sql), 0, "Parser", "long message", small, sizeof small);
    cr_assert_str_eq(small, "Parser ");
}

Test(errors, format_clips_long_lines) {
    char sql[1100];
    memset(sql, 'a', 1000);
    memcpy(sql + 500, "#", 1);
    sql[1000] = '\0';
    char buf[1024];
    sql_format_error(sql, 1000, 500, "Parser", "m", buf, sizeof buf);
    char *line = strstr(buf, "\nLINE 1: ...");
    cr_assert_not_null(line, "%s", buf);
    char *caret_line = strrchr(buf, '\n') + 1;
    char *hash = strchr(line + 1, '#');
    cr_assert_not_null(hash);
    cr_assert_eq(strlen(caret_line) - 1, (size_t)(hash - (line + 1)));
    cr_assert_lt((size_t)(strchr(line + 1, '\n') - line), 100u);
    cr_assert_eq(strncmp(strchr(line + 1, '\n') - 3, "...", 3), 0);
}

/* ---- scale and corpus ---- */

Test(parse, wide_joins_and_long_and_chains) {
    size_t cap = 1 << 16, n = 0;
    char *sql = malloc(cap);
    cr_assert_not_null(sql);
    n += (size_t)snprintf(sql + n, cap - n, "SELECT x1 FROM t1");
    for (int i = 2; i <= 64; i++)
        n += (size_t)snprintf(sql + n, cap - n, ", t%d", i);
    n += (size_t)snprintf(sql + n, cap - n, " WHERE a1 = 1");
    for (int i = 2; i <= 300; i++)
        n += (size_t)snprintf(sql + n, cap - n, " AND a%d = b%d", i, i);
    SqlArena *a;
    AstSelect *s = sel1(&a, sql);
    cr_assert_eq(s->nfrom, 64);
    cr_assert_str_eq(s->from[63].name, "t64");
    /* 300 terms, in order, in a balanced tree: 9 levels of AND (2^9 >= 300) */
    AstExpr *terms[300];
    int nterms = 0;
    collect_chain(s->where, OP_AND, terms, 300, &nterms);
    cr_assert_eq(nterms, 300);
    cr_assert_str_eq(terms[0]->a->str, "a1");
    expect_int(terms[0]->b, 1);
    for (int i = 1; i < 300; i++) {
        char an[16], bn[16];
        snprintf(an, sizeof an, "a%d", i + 1);
        snprintf(bn, sizeof bn, "b%d", i + 1);
        cr_assert_str_eq(terms[i]->a->str, an);
        cr_assert_str_eq(terms[i]->b->str, bn);
    }
    cr_assert_eq(s->where->height, 9 + 2);
    sql_arena_free(a);
    free(sql);
}

/* Returns 1 and the next SQL statement text of an sqllogictest file (SQL
 * lines of a statement/query record acting as SQLite); 0 at end of file. */
static int next_slt_sql(FILE *f, char *sql, size_t cap, int *expect_error) {
    char line[8192];
    int skip = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (line[0] == '\0') {
            skip = 0;
            continue;
        }
        if (strncmp(line, "skipif sqlite", 13) == 0) skip = 1;
        if (strncmp(line, "onlyif ", 7) == 0 && strncmp(line + 7, "sqlite", 6) != 0) skip = 1;
        int is_stmt = strncmp(line, "statement", 9) == 0, is_query = strncmp(line, "query", 5) == 0;
        if (!is_stmt && !is_query) continue;
        *expect_error = strncmp(line, "statement error", 15) == 0;
        size_t n = 0;
        sql[0] = '\0';
        while (fgets(line, sizeof line, f)) {
            line[strcspn(line, "\r\n")] = '\0';
            if (line[0] == '\0' || strcmp(line, "----") == 0) break;
            n += (size_t)snprintf(sql + n, cap - n, "%s\n", line);
            if (n >= cap) n = cap - 1;
        }
        if (skip) {
            skip = 0;
            continue;
        }
        return 1;
    }
    return 0;
}

Test(corpus, select5_parses) {
    const char *src = getenv("GQP_SOURCE_DIR");
    if (!src) cr_skip_test("GQP_SOURCE_DIR not set");
    char path[4096];
    snprintf(path, sizeof path, "%s/../shared/slt/select5.test", src);
    FILE *f = fopen(path, "r");
    if (!f) cr_skip_test("%s not found", path);
    static char sql[1 << 16];
    int expect_error;
    int64_t count = 0;
    while (next_slt_sql(f, sql, sizeof sql, &expect_error)) {
        if (expect_error) continue;
        SqlArena *a = sql_arena_new();
        AstStmt *st;
        int64_t next;
        SqlError err;
        int64_t len = (int64_t)strlen(sql);
        int rc = sql_parse_one(sql, len, 0, a, &st, &next, &err);
        cr_assert_eq(rc, 0, "%s at %lld in:\n%s", err.msg, (long long)err.offset, sql);
        cr_assert_not_null(st);
        sql_arena_free(a);
        count++;
    }
    fclose(f);
    cr_assert_gt(count, 1000, "only %lld statements read", (long long)count);
}

Test(parse, outer_join_inside_parenthesized_join_is_refused) {
    /* flattened into written order, the outer ON of a JOIN (b LEFT JOIN c)
     * could read c's NULL-padded rows: refused, never answered wrongly */
    SqlError err;
    parse_fails("SELECT * FROM a JOIN (b LEFT JOIN c ON b.y = c.z) ON a.x = c.z", &err);
    cr_expect(strstr(err.msg, "outer join inside a parenthesized join") != NULL, "%s", err.msg);
    SqlArena *ar;
    sel1(&ar, "SELECT * FROM (b LEFT JOIN c ON b.y = c.z) JOIN a ON a.x = c.z");
    sql_arena_free(ar);
    sel1(&ar, "SELECT * FROM a JOIN (b JOIN c ON b.y = c.z) ON a.x = c.z");
    sql_arena_free(ar);
}
