/*
 * tokenize.c -- the SQL tokenizer. Tokens are positions into the caller's
 * text (nothing is copied); the parser decodes values from them.
 *
 *   input                      kind        notes
 *   ------------------------   ---------   --------------------------------
 *   abc, _x1, héllo            TK_IDENT    bytes >= 0x80 count as letters
 *   "a ""b""", `a`             TK_IDENT    quoted = 1, never a keyword
 *   123, 0x1F                  TK_INTEGER  overflow handled by the parser
 *   1.5, .5, 1e3, 2.E-4        TK_FLOAT
 *   'it''s'                    TK_STRING   pos/len include the quotes
 *   ( ) , ; . * + - / % = ==   TK_OP
 *   <> != < <= > >= ||
 *   [ ] { } : :=               TK_OP       table function options
 *   unterminated ' " ` / *     TK_ERROR    pos at the opening quote/comment,
 *                                          len to the end of the input
 *   ?, ?12, :a, $a, @a         TK_PARAM    bind parameter (name: identifier chars)
 *   any other byte             TK_ERROR    len 1
 */
#include "sqlfront/sqlfront.h"

/* Returns 1 when c can start an identifier. */
static int is_ident_start(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

/* Returns 1 when c can continue an identifier. */
static int is_ident_char(unsigned char c) {
    return is_ident_start(c) || (c >= '0' && c <= '9') || c == '$';
}

/* Returns 1 for a decimal digit. */
static int is_digit(unsigned char c) {
    return c >= '0' && c <= '9';
}

/* Returns 1 for a hexadecimal digit. */
static int is_hex_digit(unsigned char c) {
    return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Returns 1 for SQL whitespace (CR and LF included, so CRLF is plain). */
static int is_space(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Returns a token of kind k covering sql[pos .. pos+n). */
static SqlToken make_token(SqlTokKind k, int64_t pos, int64_t n) {
    SqlToken t;
    t.kind = k;
    t.pos = pos;
    t.len = n;
    t.quoted = 0;
    return t;
}

/* Returns the offset just past the quoted run opened by the quote char q at
 * sql[pos] (a doubled q inside is an escaped q), or -1 when it is not
 * closed before len. */
static int64_t scan_quoted(const unsigned char *s, int64_t len, int64_t pos, unsigned char q) {
    int64_t i = pos + 1;
    while (i < len) {
        if (s[i] == q) {
            if (i + 1 < len && s[i + 1] == q) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i++;
    }
    return -1;
}

/* Returns the offset just past the number starting at s[pos] (a digit, or
 * '.' followed by a digit) and sets *is_float when it has a fraction or an
 * exponent. An 'e' not followed by digits is not part of the number. */
static int64_t scan_number(const unsigned char *s, int64_t len, int64_t pos, int *is_float) {
    int64_t i = pos;
    *is_float = 0;
    if (s[i] == '0' && i + 2 < len && (s[i + 1] == 'x' || s[i + 1] == 'X') &&
        is_hex_digit(s[i + 2])) {
        i += 2;
        while (i < len && is_hex_digit(s[i]))
            i++;
        return i;
    }
    while (i < len && is_digit(s[i]))
        i++;
    if (i < len && s[i] == '.') {
        *is_float = 1;
        i++;
        while (i < len && is_digit(s[i]))
            i++;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        int64_t j = i + 1;
        if (j < len && (s[j] == '+' || s[j] == '-')) j++;
        if (j < len && is_digit(s[j])) {
            while (j < len && is_digit(s[j]))
                j++;
            *is_float = 1;
            i = j;
        }
    }
    return i;
}

/* Returns the next token at or after byte offset pos of sql[0..len): skips
 * whitespace and comments first. At or past len returns TK_EOF with
 * pos = len. Never fails: malformed input gives a TK_ERROR token (see the
 * table at the top of this file). */
SqlToken sql_next_token(const char *sql, int64_t len, int64_t pos) {
    const unsigned char *s = (const unsigned char *)sql;
    if (pos < 0) pos = 0;
    for (;;) {
        while (pos < len && is_space(s[pos]))
            pos++;
        if (pos + 1 < len && s[pos] == '-' && s[pos + 1] == '-') {
            while (pos < len && s[pos] != '\n')
                pos++;
            continue;
        }
        if (pos + 1 < len && s[pos] == '/' && s[pos + 1] == '*') {
            int64_t i = pos + 2;
            while (i + 1 < len && !(s[i] == '*' && s[i + 1] == '/'))
                i++;
            if (i + 1 >= len) return make_token(TK_ERROR, pos, len - pos);
            pos = i + 2;
            continue;
        }
        break;
    }
    if (pos >= len) return make_token(TK_EOF, len, 0);

    unsigned char c = s[pos];
    if (is_ident_start(c)) {
        int64_t i = pos + 1;
        while (i < len && is_ident_char(s[i]))
            i++;
        return make_token(TK_IDENT, pos, i - pos);
    }
    if (is_digit(c) || (c == '.' && pos + 1 < len && is_digit(s[pos + 1]))) {
        int is_float;
        int64_t end = scan_number(s, len, pos, &is_float);
        return make_token(is_float ? TK_FLOAT : TK_INTEGER, pos, end - pos);
    }
    if (c == '\'' || c == '"' || c == '`') {
        int64_t end = scan_quoted(s, len, pos, c);
        if (end < 0) return make_token(TK_ERROR, pos, len - pos);
        SqlToken t = make_token(c == '\'' ? TK_STRING : TK_IDENT, pos, end - pos);
        t.quoted = c != '\'';
        return t;
    }
    if (c == '?') {
        int64_t i = pos + 1;
        while (i < len && is_digit(s[i]))
            i++;
        return make_token(TK_PARAM, pos, i - pos);
    }
    if ((c == ':' || c == '$' || c == '@') && pos + 1 < len && is_ident_char(s[pos + 1])) {
        int64_t i = pos + 1;
        while (i < len && is_ident_char(s[i]))
            i++;
        return make_token(TK_PARAM, pos, i - pos);
    }
    int64_t n2 = pos + 1 < len ? 2 : 1;
    unsigned char d = n2 == 2 ? s[pos + 1] : 0;
    switch (c) {
    case '(':
    case ')':
    case ',':
    case ';':
    case '.':
    case '*':
    case '+':
    case '-':
    case '/':
    case '%':
    case '[':
    case ']':
    case '{':
    case '}':
        return make_token(TK_OP, pos, 1);
    case ':':
        return make_token(TK_OP, pos, d == '=' ? 2 : 1);
    case '=':
        return make_token(TK_OP, pos, d == '=' ? 2 : 1);
    case '<':
        return make_token(TK_OP, pos, (d == '>' || d == '=') ? 2 : 1);
    case '>':
        return make_token(TK_OP, pos, d == '=' ? 2 : 1);
    case '!':
        if (d == '=') return make_token(TK_OP, pos, 2);
        break;
    case '|':
        if (d == '|') return make_token(TK_OP, pos, 2);
        break;
    default:
        break;
    }
    return make_token(TK_ERROR, pos, 1);
}
