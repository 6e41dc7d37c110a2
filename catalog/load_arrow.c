/*
 * load_arrow.c -- a table from Arrow record batches (the Arrow C Data
 * Interface, include/gqp_arrow.h): each field of the batches' struct type
 * becomes a column, its values copied into gqp's layout (packed values,
 * byte-per-row validity, sorted string dictionaries). The batches are read,
 * never released: their owner (libgqp/arrow.c) releases them.
 *
 *   Arrow format              gqp column
 *   n                         INT64, every value NULL
 *   b                         BOOL
 *   c C s S i                 INT32
 *   I l L                     INT64 (L: values past INT64_MAX refused)
 *   f g                       FLOAT32, FLOAT64
 *   tdD tdm                   DATE (date64: milliseconds floored to days)
 *   d:p,s[,32|64|128]         DECIMAL(min(p,18), s), s <= 18, every value
 *                             within 18 digits
 *   u U, dictionary of u / U  STRING (valid UTF-8 without NUL bytes)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "catalog/cat_internal.h"
#include "gqp_arrow.h"

/* What an Arrow array holds, as far as gqp reads it. */
typedef enum ArrKind {
    AK_NULL,
    AK_BOOL,
    AK_I8,
    AK_U8,
    AK_I16,
    AK_U16,
    AK_I32,
    AK_U32,
    AK_I64,
    AK_U64,
    AK_F32,
    AK_F64,
    AK_DATE32,
    AK_DATE64,
    AK_DEC,
    AK_UTF8,
    AK_LUTF8
} ArrKind;

/* One field of the schema and the column it becomes. */
typedef struct ArrField {
    const char *name;
    ArrKind kind;    /* the values (dictionary-encoded: the dictionary's) */
    int dict;        /* 1: dictionary-encoded, indexes of kind `index` */
    ArrKind index;   /* dictionary-encoded: AK_I8 .. AK_U64 */
    int dec_bytes;   /* AK_DEC: 4, 8 or 16 bytes per value */
    int dec_prec;    /* AK_DEC: the Arrow precision */
    CatType type;    /* the gqp column */
    int prec, scale; /* DECIMAL */
} ArrField;

/* Kind of the Arrow format string f that gqp reads (decimals: *bytes,
 * *prec, *scale set), or -1 for any other format. */
static int parse_format(const char *f, int *bytes, int *prec, int *scale) {
    static const struct {
        const char *fmt;
        ArrKind kind;
    } simple[] = {{"n", AK_NULL},     {"b", AK_BOOL},     {"c", AK_I8},   {"C", AK_U8},
                  {"s", AK_I16},      {"S", AK_U16},      {"i", AK_I32},  {"I", AK_U32},
                  {"l", AK_I64},      {"L", AK_U64},      {"f", AK_F32},  {"g", AK_F64},
                  {"tdD", AK_DATE32}, {"tdm", AK_DATE64}, {"u", AK_UTF8}, {"U", AK_LUTF8}};
    if (!f) return -1;
    for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++)
        if (strcmp(f, simple[i].fmt) == 0) return (int)simple[i].kind;
    if (f[0] == 'd' && f[1] == ':') {
        char *end;
        long p = strtol(f + 2, &end, 10);
        if (*end != ',') return -1;
        long s = strtol(end + 1, &end, 10);
        long bw = 128;
        if (*end == ',') bw = strtol(end + 1, &end, 10);
        if (*end || p < 1 || p > 38 || (bw != 32 && bw != 64 && bw != 128)) return -1;
        *bytes = (int)(bw / 8);
        *prec = (int)p;
        *scale = (int)s;
        return AK_DEC;
    }
    return -1;
}

/* A readable name of the Arrow type that format f spells, for messages. */
static const char *format_name(const char *f) {
    static const struct {
        const char *prefix;
        const char *name;
    } names[] = {{"ts", "timestamp"},
                 {"tt", "time"},
                 {"tD", "duration"},
                 {"ti", "interval"},
                 {"+l", "list"},
                 {"+L", "large_list"},
                 {"+vl", "list_view"},
                 {"+vL", "large_list_view"},
                 {"+w", "fixed_size_list"},
                 {"+s", "struct"},
                 {"+m", "map"},
                 {"+u", "union"},
                 {"+r", "run_end_encoded"},
                 {"vu", "string_view"},
                 {"vz", "binary_view"},
                 {"w:", "fixed_size_binary"},
                 {"z", "binary"},
                 {"Z", "large_binary"},
                 {"e", "float16"},
                 {"d:", "decimal"},
                 {"tdD", "date32"},
                 {"tdm", "date64"}};
    if (!f) return "unknown";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strncmp(f, names[i].prefix, strlen(names[i].prefix)) == 0) return names[i].name;
    return "unknown";
}

/* The gqp column type of field x (kind, decimal figures set). */
static void field_type(ArrField *x) {
    switch (x->dict ? AK_UTF8 : x->kind) {
    case AK_BOOL:
        x->type = CAT_BOOL;
        break;
    case AK_I8:
    case AK_U8:
    case AK_I16:
    case AK_U16:
    case AK_I32:
        x->type = CAT_INT32;
        break;
    case AK_F32:
        x->type = CAT_FLOAT32;
        break;
    case AK_F64:
        x->type = CAT_FLOAT64;
        break;
    case AK_DATE32:
    case AK_DATE64:
        x->type = CAT_DATE;
        break;
    case AK_DEC:
        x->type = CAT_DECIMAL;
        x->prec = x->dec_prec > CAT_DEC_MAX_PREC ? CAT_DEC_MAX_PREC : x->dec_prec;
        if (x->prec < x->scale) x->prec = x->scale;
        break;
    case AK_UTF8:
    case AK_LUTF8:
        x->type = CAT_STRING;
        break;
    default: /* AK_NULL, AK_U32, AK_I64, AK_U64 */
        x->type = CAT_INT64;
        break;
    }
}

/* Read schema's field j into *x. Returns 0, or -1 with err naming the
 * column (table `table`) when gqp cannot hold its type. */
static int read_field(const char *table, const struct ArrowSchema *schema, int j, ArrField *x,
                      CatError *err) {
    const struct ArrowSchema *c = schema->children ? schema->children[j] : NULL;
    memset(x, 0, sizeof *x);
    if (!c || !c->format || !c->release)
        return cat_err(err, "cannot register table '%s': field %d of the Arrow schema is missing",
                       table, j + 1);
    x->name = c->name;
    if (!c->name || !*c->name)
        return cat_err(err, "cannot register table '%s': column %d has no name", table, j + 1);
    const char *vf = c->format;
    if (c->dictionary) {
        int k = parse_format(c->format, &x->dec_bytes, &x->dec_prec, &x->scale);
        if (k < AK_I8 || k > AK_U64 || !c->dictionary->format)
            return cat_err(err,
                           "cannot register table '%s': column '%s' is dictionary-encoded with "
                           "index format '%s', which is not an integer type",
                           table, c->name, c->format);
        x->dict = 1;
        x->index = (ArrKind)k;
        vf = c->dictionary->format;
    }
    int k = parse_format(vf, &x->dec_bytes, &x->dec_prec, &x->scale);
    if (x->dict && k != AK_UTF8 && k != AK_LUTF8)
        return cat_err(err,
                       "cannot register table '%s': column '%s' is a dictionary of Arrow type %s "
                       "(format '%s'); gqp reads dictionaries of strings only (decode it first)",
                       table, c->name, k >= 0 ? "other than utf8" : format_name(vf), vf);
    if (k < 0)
        return cat_err(err,
                       "cannot register table '%s': column '%s' has Arrow type %s (format '%s'), "
                       "which gqp cannot hold (it holds integers, floats, decimals of up to 18 "
                       "digits, booleans, dates and strings; cast the column first)",
                       table, c->name, format_name(vf), vf);
    x->kind = (ArrKind)k;
    if (k == AK_DEC && (x->scale < 0 || x->scale > CAT_DEC_MAX_PREC))
        return cat_err(err,
                       "cannot register table '%s': column '%s' has Arrow type decimal(%d,%d), "
                       "whose scale gqp cannot hold (DECIMAL scales are 0..%d)",
                       table, c->name, x->dec_prec, x->scale, CAT_DEC_MAX_PREC);
    field_type(x);
    return 0;
}

/* See catalog.h. */
int cat_arrow_check(const Catalog *cat, const char *name, const struct ArrowSchema *schema,
                    int replace, CatError *err) {
    if (!name || !*name) return cat_err(err, "table name is empty");
    if (!schema || !schema->release || !schema->format)
        return cat_err(err, "cannot register table '%s': no Arrow schema", name);
    if (strcmp(schema->format, "+s") != 0)
        return cat_err(err,
                       "cannot register table '%s': the Arrow data is of type %s (format '%s'), "
                       "not a struct of columns (a record batch)",
                       name, format_name(schema->format), schema->format);
    if (schema->n_children < 1)
        return cat_err(err, "cannot register table '%s': the Arrow schema has no column", name);
    if (schema->n_children > 100000)
        return cat_err(err, "cannot register table '%s': %lld columns are too many", name,
                       (long long)schema->n_children);
    if (!replace && cat_find_table(cat, name))
        return cat_err(err, "table '%s' already exists", name);
    int nc = (int)schema->n_children;
    for (int j = 0; j < nc; j++) {
        ArrField x;
        if (read_field(name, schema, j, &x, err) != 0) return -1;
        for (int i = 0; i < j; i++)
            if (strcasecmp(schema->children[i]->name, x.name) == 0)
                return cat_err(err, "cannot register table '%s': duplicate column name '%s'", name,
                               x.name);
    }
    return 0;
}

/* Bit i of the bitmap bm. */
static int bit(const void *bm, int64_t i) {
    return (((const uint8_t *)bm)[i >> 3] >> (i & 7)) & 1;
}

/* Value i of an integer array of kind k (data: its values buffer), as
 * int64; *over is set when a uint64 passes INT64_MAX. */
static int64_t int_at(ArrKind k, const void *data, int64_t i, int *over) {
    switch (k) {
    case AK_I8:
        return ((const int8_t *)data)[i];
    case AK_U8:
        return ((const uint8_t *)data)[i];
    case AK_I16:
        return ((const int16_t *)data)[i];
    case AK_U16:
        return ((const uint16_t *)data)[i];
    case AK_I32:
    case AK_DATE32:
        return ((const int32_t *)data)[i];
    case AK_U32:
        return ((const uint32_t *)data)[i];
    case AK_U64: {
        uint64_t u = ((const uint64_t *)data)[i];
        if (u > (uint64_t)INT64_MAX) *over = 1;
        return (int64_t)u;
    }
    default: /* AK_I64, AK_DATE64 */
        return ((const int64_t *)data)[i];
    }
}

/* The buffers an array of kind k (dict: dictionary-encoded) has. */
static int64_t want_buffers(ArrKind k, int dict) {
    if (dict) return 2;
    if (k == AK_NULL) return 0;
    return k == AK_UTF8 || k == AK_LUTF8 ? 3 : 2;
}

/* Check that array a (n_rows from logical row `first`) has the shape of
 * kind k. Returns 0, or -1 with err naming the column. */
static int check_array(const char *table, const ArrField *x, const struct ArrowArray *a, ArrKind k,
                       int dict, int64_t first, int64_t nrows, CatError *err) {
    if (!a || !a->release || a->length < 0 || a->offset < 0 || a->length < first + nrows ||
        a->n_buffers != want_buffers(k, dict) || (a->n_buffers > 0 && !a->buffers) ||
        (a->n_buffers > 1 && !a->buffers[1] && a->length > 0) || (dict && !a->dictionary))
        return cat_err(err,
                       "cannot register table '%s': column '%s': the Arrow array is malformed "
                       "(its length, offset or buffers do not match its type)",
                       table, x->name);
    return 0;
}

/* The string at logical index i of a utf8 / large_utf8 array a (offset
 * applied), its length in *len; -1 in *len when the offsets are bad. */
static const char *str_at(const struct ArrowArray *a, ArrKind k, int64_t i, size_t *len) {
    int64_t lo, hi;
    if (k == AK_UTF8) {
        lo = ((const int32_t *)a->buffers[1])[i];
        hi = ((const int32_t *)a->buffers[1])[i + 1];
    } else {
        lo = ((const int64_t *)a->buffers[1])[i];
        hi = ((const int64_t *)a->buffers[1])[i + 1];
    }
    if (lo < 0 || hi < lo || (hi > lo && !a->buffers[2])) {
        *len = (size_t)-1;
        return "";
    }
    *len = (size_t)(hi - lo);
    return hi > lo ? (const char *)a->buffers[2] + lo : "";
}

/* A column being filled: its arrays (and, for strings, the pointers into
 * the Arrow buffers that become its dictionary). */
typedef struct Fill {
    void *data;
    uint8_t *valid;
    int64_t nulls;
    const char **strs;
    size_t *lens;
} Fill;

/* Copy rows [first, first + n) of the batch's column array a into rows
 * [at, at + n) of fill f. Returns 0, or -1 with err naming the column and
 * row (rows counted from 1 over all batches). */
static int fill_batch(const char *table, const ArrField *x, const struct ArrowArray *a,
                      int64_t first, int64_t n, int64_t at, Fill *f, CatError *err) {
    if (check_array(table, x, a, x->dict ? x->index : x->kind, x->dict, first, n, err) != 0)
        return -1;
    const struct ArrowArray *d = x->dict ? a->dictionary : NULL;
    if (d && check_array(table, x, d, x->kind, 0, 0, d->length, err) != 0) return -1;
    const void *vbm = a->n_buffers > 0 && a->null_count != 0 ? a->buffers[0] : NULL;
    const void *vals = a->n_buffers > 1 ? a->buffers[1] : NULL;
    int64_t base = a->offset + first;
    for (int64_t r = 0; r < n; r++) {
        int64_t i = base + r, row = at + r;
        if (x->kind == AK_NULL || (vbm && !bit(vbm, i))) {
            f->nulls++;
            continue;
        }
        f->valid[row] = 1;
        int over = 0;
        if (x->dict) {
            int64_t k = int_at(x->index, vals, i, &over);
            if (over || k < 0 || k >= d->length)
                return cat_err(err,
                               "cannot register table '%s': column '%s' row %lld: dictionary "
                               "index %lld is out of range",
                               table, x->name, (long long)(row + 1), (long long)k);
            int64_t di = d->offset + k;
            if (d->null_count != 0 && d->buffers[0] && !bit(d->buffers[0], di)) {
                f->valid[row] = 0;
                f->nulls++;
                continue;
            }
            f->strs[row] = str_at(d, x->kind, di, &f->lens[row]);
        } else if (x->kind == AK_UTF8 || x->kind == AK_LUTF8) {
            f->strs[row] = str_at(a, x->kind, i, &f->lens[row]);
        }
        switch (x->type) {
        case CAT_STRING: {
            const char *s = f->strs[row];
            size_t len = f->lens[row];
            if (len == (size_t)-1)
                return cat_err(err,
                               "cannot register table '%s': column '%s' row %lld: the string "
                               "offsets are malformed",
                               table, x->name, (long long)(row + 1));
            if (memchr(s, '\0', len) || cat_utf8_check(s, len) != len)
                return cat_err(err,
                               "cannot register table '%s': column '%s' row %lld: the string is "
                               "not valid UTF-8 text (or holds a NUL byte)",
                               table, x->name, (long long)(row + 1));
            break;
        }
        case CAT_BOOL:
            ((uint8_t *)f->data)[row] = (uint8_t)bit(vals, i);
            break;
        case CAT_INT32:
            ((int32_t *)f->data)[row] = (int32_t)int_at(x->kind, vals, i, &over);
            break;
        case CAT_INT64:
            ((int64_t *)f->data)[row] = int_at(x->kind, vals, i, &over);
            if (over)
                return cat_err(err,
                               "cannot register table '%s': column '%s' row %lld: the uint64 "
                               "value %llu does not fit BIGINT",
                               table, x->name, (long long)(row + 1),
                               (unsigned long long)((const uint64_t *)vals)[i]);
            break;
        case CAT_FLOAT32:
            ((float *)f->data)[row] = ((const float *)vals)[i];
            break;
        case CAT_FLOAT64:
            ((double *)f->data)[row] = ((const double *)vals)[i];
            break;
        case CAT_DATE: {
            int64_t v = int_at(x->kind, vals, i, &over);
            if (x->kind == AK_DATE64) {
                int64_t q = v / 86400000, m = v % 86400000;
                v = m < 0 ? q - 1 : q;
            }
            if (v < INT32_MIN || v > INT32_MAX)
                return cat_err(err,
                               "cannot register table '%s': column '%s' row %lld: the date is "
                               "out of DATE's range",
                               table, x->name, (long long)(row + 1));
            ((int32_t *)f->data)[row] = (int32_t)v;
            break;
        }
        case CAT_DECIMAL: {
            int64_t v;
            int fits = 1;
            if (x->dec_bytes == 4) {
                v = ((const int32_t *)vals)[i];
            } else if (x->dec_bytes == 8) {
                v = ((const int64_t *)vals)[i];
            } else {
                /* 128-bit two's complement, little-endian: low word, then
                 * the high word, which must only extend the low word's sign */
                uint64_t lo, hi;
                memcpy(&lo, (const char *)vals + i * 16, 8);
                memcpy(&hi, (const char *)vals + i * 16 + 8, 8);
                v = (int64_t)lo;
                fits = hi == (v < 0 ? UINT64_MAX : 0);
            }
            int64_t lim = cat_pow10(CAT_DEC_MAX_PREC) - 1;
            if (!fits || v > lim || v < -lim)
                return cat_err(err,
                               "cannot register table '%s': column '%s' row %lld: the "
                               "decimal(%d,%d) value needs more than %d digits, gqp's DECIMAL "
                               "limit",
                               table, x->name, (long long)(row + 1), x->dec_prec, x->scale,
                               CAT_DEC_MAX_PREC);
            ((int64_t *)f->data)[row] = v;
            break;
        }
        default:
            break;
        }
    }
    return 0;
}

/* Free the fill arrays of nc columns (NULL entries allowed). */
static void fills_free(Fill *f, int nc) {
    for (int j = 0; f && j < nc; j++) {
        cat_host_free(f[j].data);
        cat_host_free(f[j].valid);
        free(f[j].strs);
        free(f[j].lens);
    }
    free(f);
}

/* See catalog.h. */
int cat_load_arrow(Catalog *cat, const char *name, const struct ArrowSchema *schema,
                   struct ArrowArray *const *batches, int64_t nbatches, int replace,
                   CatError *err) {
    if (cat_arrow_check(cat, name, schema, replace, err) != 0) return -1;
    int nc = (int)schema->n_children;
    int64_t n = 0;
    for (int64_t b = 0; b < nbatches; b++) {
        const struct ArrowArray *a = batches[b];
        if (!a || !a->release || a->length < 0 || a->offset < 0 || a->n_children != nc ||
            (nc > 0 && !a->children))
            return cat_err(err,
                           "cannot register table '%s': Arrow batch %lld does not match the "
                           "schema (%d columns)",
                           name, (long long)(b + 1), nc);
        if (a->length > INT64_MAX / 64 - n)
            return cat_err(err, "cannot register table '%s': too many rows", name);
        n += a->length;
    }
    ArrField *fields = calloc((size_t)nc, sizeof *fields);
    Fill *fills = calloc((size_t)nc, sizeof *fills);
    const char **names = calloc((size_t)nc, sizeof *names);
    CatType *types = calloc((size_t)nc, sizeof *types);
    CatTable *t = NULL;
    int rc = -1;
    if (!fields || !fills || !names || !types) {
        cat_err(err, "out of memory registering table '%s'", name);
        goto done;
    }
    for (int j = 0; j < nc; j++) {
        ArrField *x = &fields[j];
        Fill *f = &fills[j];
        read_field(name, schema, j, x, err);
        names[j] = x->name;
        types[j] = x->type;
        size_t bytes = (size_t)n * cat_type_width(x->type);
        f->data = cat_host_alloc(bytes ? bytes : 1);
        f->valid = cat_host_alloc(n ? (size_t)n : 1);
        if (x->type == CAT_STRING) {
            f->strs = calloc(n ? (size_t)n : 1, sizeof *f->strs);
            f->lens = calloc(n ? (size_t)n : 1, sizeof *f->lens);
        }
        if (!f->data || !f->valid || (x->type == CAT_STRING && (!f->strs || !f->lens))) {
            cat_err(err, "out of memory registering table '%s' (%lld rows)", name, (long long)n);
            goto done;
        }
        int64_t at = 0;
        for (int64_t b = 0; b < nbatches; b++) {
            const struct ArrowArray *a = batches[b];
            if (fill_batch(name, x, a->children[j], a->offset, a->length, at, f, err) != 0)
                goto done;
            at += a->length;
        }
    }
    t = cat_table_new(name, nc, names, types);
    if (!t) {
        cat_err(err, "out of memory registering table '%s'", name);
        goto done;
    }
    for (int j = 0; j < nc; j++) {
        CatColumn *c = &t->cols[j];
        Fill *f = &fills[j];
        if (f->nulls == 0) {
            cat_host_free(f->valid);
            f->valid = NULL;
        }
        if (c->type == CAT_STRING) {
            CatDict *d = cat_dict_build_masked(f->strs, f->lens, n, f->valid, (int32_t *)f->data);
            if (!d) {
                cat_err(err, "out of memory registering table '%s' (column '%s')", name, c->name);
                goto done;
            }
            cat_dict_free(c->dict);
            c->dict = d;
        }
        cat_host_free(c->data);
        c->data = f->data;
        c->valid = f->valid;
        f->data = NULL;
        f->valid = NULL;
        c->n = n;
        c->prec = fields[j].prec;
        c->scale = fields[j].scale;
    }
    t->nrows = n;
    cat_table_stats(t);
    /* replacing: the old table's slot makes room, so the add cannot fail */
    if (replace) cat_drop_table(cat, name, NULL);
    if (cat_catalog_add(cat, t, err) != 0) goto done;
    t = NULL;
    rc = 0;
done:
    cat_table_free(t);
    fills_free(fills, nc);
    free(fields);
    free(names);
    free(types);
    return rc;
}
