/*
 * gen_ssb.c -- the Star Schema Benchmark's five tables (O'Neil et al.,
 * following ssb-dbgen's value domains), as `.tbl` text and as binary-column
 * folders, with the configs that declare them.
 *
 * Every value is a pure function of (seed, table, row or order, field), so
 * the output does not depend on the thread count. Output under DIR:
 *
 *   path                | contents
 *   --------------------+----------------------------------------------------
 *   <table>.tbl         | '|'-delimited rows with a trailing '|' (dbgen's form)
 *   bin/<table>/        | one <col>.bin (+ <col>.dict for STRING) per column
 *   gqp.yaml            | the five tables from bin/ (fast to load)
 *   gqp-tbl.yaml        | the five tables from the .tbl files
 *
 * Sizes at scale factor SF (fractional SF scales every table but ddate):
 *
 *   table     | rows
 *   ----------+---------------------------------------------------------------
 *   lineorder | 1,500,000 x SF orders of 1..7 lines each (about 6,000,000 x SF)
 *   customer  | 30,000 x SF
 *   supplier  | 2,000 x SF
 *   part      | 200,000 x floor(1 + log2 SF) for SF >= 1, ceil(200,000 x SF) below
 *   ddate     | 2,557 days, 1992-01-01 .. 1998-12-31
 *
 * lineorder is generated in blocks of GEN_BLOCK_ORDERS orders. A first pass
 * counts each block's lines (the line count of an order is hashed), a prefix
 * sum gives each block's first row, and then rounds of one block per thread
 * fill column arrays that each thread pwrite()s at its rows' offset into the
 * .bin files, and format text that is pwrite()n at offsets found by a prefix
 * sum over the round. The dimension tables are small and built in memory.
 */
#include "catalog/cat_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* TUNING: orders per lineorder block (at most 7x as many rows; ~200 bytes of
 * text plus 68 bytes of columns per row and thread). */
#define GEN_BLOCK_ORDERS 8192
/* Upper bound on the text of one lineorder row (17 fields of <= 15 bytes). */
#define GEN_LO_ROW_BYTES 256
/* Number of lineorder columns. */
#define LO_NCOLS 17
/* Day index of the last order date (1998-08-02) counted from 1992-01-01. */
#define LAST_ORDER_DAY 2405
/* Days in the date table (1992-01-01 .. 1998-12-31). */
#define NDAYS 2557

/* Hash salts per table, so tables draw independent streams. */
enum { SALT_LO = 1, SALT_CUST = 2, SALT_SUPP = 3, SALT_PART = 4 };

/* 64 random bits for (seed, table salt, row, stream). */
static uint64_t rnd(uint64_t seed, unsigned salt, int64_t row, unsigned stream) {
    return cat_splitmix64(cat_splitmix64(seed ^ ((uint64_t)salt << 48) ^ ((uint64_t)stream << 56)) ^
                          (uint64_t)row);
}

/* Uniform integer in [lo, hi] from the high 32 bits of h. */
static int32_t uni(uint64_t h, int32_t lo, int32_t hi) {
    return lo + (int32_t)(((h >> 32) * (uint64_t)(hi - lo + 1)) >> 32);
}

static const char *const NATIONS[25] = {
    "ALGERIA", "ARGENTINA", "BRAZIL",         "CANADA",       "EGYPT", "ETHIOPIA", "FRANCE",
    "GERMANY", "INDIA",     "INDONESIA",      "IRAN",         "IRAQ",  "JAPAN",    "JORDAN",
    "KENYA",   "MOROCCO",   "MOZAMBIQUE",     "PERU",         "CHINA", "ROMANIA",  "SAUDI ARABIA",
    "VIETNAM", "RUSSIA",    "UNITED KINGDOM", "UNITED STATES"};
/* Region of each nation (index into REGIONS), as in TPC-H. */
static const int NATION_REGION[25] = {0, 1, 1, 1, 4, 0, 3, 3, 2, 2, 4, 4, 2,
                                      4, 0, 0, 0, 1, 2, 3, 4, 2, 3, 3, 1};
static const char *const REGIONS[5] = {"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"};
static const char *const SEGMENTS[5] = {"AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD",
                                        "MACHINERY"};
/* Sorted, so an index is also the dictionary code. */
static const char *const PRIORITIES[5] = {"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED",
                                          "5-LOW"};
static const char *const SHIPMODES[7] = {"AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"};
static const char *const COLORS[] = {
    "almond",   "antique",   "aquamarine", "azure",      "beige",     "bisque",    "black",
    "blanched", "blue",      "blush",      "brown",      "burlywood", "burnished", "chartreuse",
    "chiffon",  "chocolate", "coral",      "cornflower", "cornsilk",  "cream",     "cyan",
    "dark",     "deep",      "dim",        "dodger",     "drab",      "firebrick", "floral",
    "forest",   "frosted",   "gainsboro",  "ghost",      "goldenrod", "green",     "grey",
    "honeydew", "hot",       "indian",     "ivory",      "khaki",     "lace",      "lavender",
    "lawn",     "lemon",     "light",      "lime",       "linen",     "magenta",   "maroon",
    "medium",   "metallic",  "midnight",   "mint",       "misty",     "moccasin",  "navajo",
    "navy",     "olive",     "orange",     "orchid",     "pale",      "papaya",    "peach",
    "peru",     "pink",      "plum",       "powder",     "puff",      "purple",    "red",
    "rose",     "rosy",      "royal",      "saddle",     "salmon",    "sandy",     "seashell",
    "sienna",   "sky",       "slate",      "smoke",      "snow",      "spring",    "steel",
    "tan",      "thistle",   "tomato",     "turquoise",  "violet",    "wheat",     "white",
    "yellow"};
#define NCOLORS ((int)(sizeof COLORS / sizeof COLORS[0]))
static const char *const TYPE1[6] = {"STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"};
static const char *const TYPE2[5] = {"ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"};
static const char *const TYPE3[5] = {"TIN", "NICKEL", "BRASS", "STEEL", "COPPER"};
static const char *const CONT1[5] = {"SM", "LG", "MED", "JUMBO", "WRAP"};
static const char *const CONT2[8] = {"CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"};
static const char *const MONTHS[12] = {"January",   "February", "March",    "April",
                                       "May",       "June",     "July",     "August",
                                       "September", "October",  "November", "December"};
static const char *const WEEKDAYS[7] = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                        "Thursday", "Friday", "Saturday"};

/* Table sizes for one scale factor. */
typedef struct SsbSizes {
    int64_t orders, customers, suppliers, parts;
} SsbSizes;

/* Sizes for scale factor sf (> 0); see the header comment. */
static SsbSizes ssb_sizes(double sf) {
    SsbSizes s;
    s.orders = (int64_t)llround(1500000.0 * sf);
    s.customers = (int64_t)llround(30000.0 * sf);
    s.suppliers = (int64_t)llround(2000.0 * sf);
    if (sf >= 1.0)
        s.parts = 200000 * (int64_t)floor(1.0 + log2(sf));
    else
        s.parts = (int64_t)ceil(200000.0 * sf - 1e-9);
    if (s.orders < 1) s.orders = 1;
    if (s.customers < 1) s.customers = 1;
    if (s.suppliers < 1) s.suppliers = 1;
    if (s.parts < 1) s.parts = 1;
    return s;
}

/* Retail price of a part in cents (TPC-H's formula), the unit price of
 * lo_extendedprice. */
static int32_t part_price(int64_t partkey) {
    return (int32_t)(90000 + (partkey / 10) % 20001 + 100 * (partkey % 1000));
}

/* Copy NUL-terminated s to p; returns the new end. */
static char *put_str(char *p, const char *s) {
    size_t n = strlen(s);
    memcpy(p, s, n);
    return p + n;
}

/* pwrite all n bytes of buf at off into fd. Returns 0, or an errno value. */
static int pwrite_all(int fd, const void *buf, size_t n, int64_t off) {
    const char *p = buf;
    while (n) {
        ssize_t w = pwrite(fd, p, n, (off_t)off);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? errno : EIO;
        p += w;
        n -= (size_t)w;
        off += w;
    }
    return 0;
}

/* ------------------------------------------------------------------ ddate */

/* The calendar: datekey (YYYYMMDD) of each day index 0..NDAYS-1. */
typedef struct Calendar {
    int32_t datekey[NDAYS];
} Calendar;

/* Days in month m (1..12) of year y. */
static int month_days(int y, int m) {
    static const int d[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    return d[m - 1] + (m == 2 && leap);
}

/* Fill cal with the datekeys of 1992-01-01 .. 1998-12-31. */
static void calendar_init(Calendar *cal) {
    int y = 1992, m = 1, d = 1;
    for (int i = 0; i < NDAYS; i++) {
        cal->datekey[i] = y * 10000 + m * 100 + d;
        if (++d > month_days(y, m)) {
            d = 1;
            if (++m > 12) {
                m = 1;
                y++;
            }
        }
    }
}

/* ------------------------------------------------------ dimension tables */

/* One field of a dimension row: an integer, or a string in s. */
typedef struct Field {
    int32_t v;
    char s[64];
} Field;

/* A dimension table being built: per column either int32 values or strings
 * kept back to back in a growing arena. */
typedef struct DimBuild {
    const char *name;
    int ncols;
    const char *const *col_names;
    const CatType *col_types;
    int64_t n;
    CatTable *t;       /* its int32 arrays are filled in place */
    char **arena;      /* per STRING column: bytes, each string NUL-terminated */
    size_t *arena_len; /* bytes used */
    size_t *arena_cap;
    int64_t **str_off; /* per STRING column: n offsets into arena */
} DimBuild;

/* Row generator: fill f[0..ncols) for row i (0-based) of a dimension. */
typedef void (*DimRowFn)(const void *ctx, int64_t i, Field *f);

/* Column of ddate, customer, supplier and part: names and types in .tbl
 * order (the order of tests/ssb/schema.sql). */
static const char *const CUST_COLS[] = {"c_custkey", "c_name",   "c_address", "c_city",
                                        "c_nation",  "c_region", "c_phone",   "c_mktsegment"};
static const CatType CUST_TYPES[] = {CAT_INT32,  CAT_STRING, CAT_STRING, CAT_STRING,
                                     CAT_STRING, CAT_STRING, CAT_STRING, CAT_STRING};
static const char *const SUPP_COLS[] = {"s_suppkey", "s_name",   "s_address", "s_city",
                                        "s_nation",  "s_region", "s_phone"};
static const CatType SUPP_TYPES[] = {CAT_INT32,  CAT_STRING, CAT_STRING, CAT_STRING,
                                     CAT_STRING, CAT_STRING, CAT_STRING};
static const char *const PART_COLS[] = {"p_partkey", "p_name", "p_mfgr", "p_category", "p_brand1",
                                        "p_color",   "p_type", "p_size", "p_container"};
static const CatType PART_TYPES[] = {CAT_INT32,  CAT_STRING, CAT_STRING, CAT_STRING, CAT_STRING,
                                     CAT_STRING, CAT_STRING, CAT_INT32,  CAT_STRING};
static const char *const DATE_COLS[] = {"d_datekey",
                                        "d_date",
                                        "d_dayofweek",
                                        "d_month",
                                        "d_year",
                                        "d_yearmonthnum",
                                        "d_yearmonth",
                                        "d_daynuminweek",
                                        "d_daynuminmonth",
                                        "d_daynuminyear",
                                        "d_monthnuminyear",
                                        "d_weeknuminyear",
                                        "d_sellingseason",
                                        "d_lastdayinweekfl",
                                        "d_lastdayinmonthfl",
                                        "d_holidayfl",
                                        "d_weekdayfl"};
static const CatType DATE_TYPES[] = {CAT_INT32, CAT_STRING, CAT_STRING, CAT_STRING, CAT_INT32,
                                     CAT_INT32, CAT_STRING, CAT_INT32,  CAT_INT32,  CAT_INT32,
                                     CAT_INT32, CAT_INT32,  CAT_STRING, CAT_INT32,  CAT_INT32,
                                     CAT_INT32, CAT_INT32};
static const char *const LO_COLS[LO_NCOLS] = {
    "lo_orderkey",      "lo_linenumber",    "lo_custkey",      "lo_partkey",    "lo_suppkey",
    "lo_orderdate",     "lo_orderpriority", "lo_shippriority", "lo_quantity",   "lo_extendedprice",
    "lo_ordtotalprice", "lo_discount",      "lo_revenue",      "lo_supplycost", "lo_tax",
    "lo_commitdate",    "lo_shipmode"};

/* Write a random alphanumeric string of 10..25 characters for (row, stream)
 * into s (>= 26 bytes), NUL-terminated. */
static void put_address(char *s, uint64_t seed, unsigned salt, int64_t row, unsigned stream) {
    static const char alnum[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    uint64_t h = rnd(seed, salt, row, stream);
    int len = uni(h, 10, 25);
    for (int k = 0; k < len; k++) {
        if (k % 8 == 0) h = rnd(seed, salt, row, stream + 1 + (unsigned)k / 8);
        s[k] = alnum[(h & 0xff) % 62];
        h >>= 8;
    }
    s[len] = '\0';
}

/* Context of the customer and supplier row functions. */
typedef struct DimCtx {
    uint64_t seed;
    const Calendar *cal;
} DimCtx;

/* Fill name, address, city, nation, region, phone (fields 1..6) of a
 * customer or supplier row i with the given name prefix and salt. */
static void person_fields(const DimCtx *c, unsigned salt, const char *prefix, int64_t i, Field *f) {
    f[0].v = (int32_t)(i + 1);
    snprintf(f[1].s, sizeof f[1].s, "%s#%09lld", prefix, (long long)(i + 1));
    put_address(f[2].s, c->seed, salt, i, 10);
    int nation = uni(rnd(c->seed, salt, i, 1), 0, 24);
    snprintf(f[3].s, sizeof f[3].s, "%-9.9s%d", NATIONS[nation],
             uni(rnd(c->seed, salt, i, 2), 0, 9));
    snprintf(f[4].s, sizeof f[4].s, "%s", NATIONS[nation]);
    snprintf(f[5].s, sizeof f[5].s, "%s", REGIONS[NATION_REGION[nation]]);
    uint64_t h = rnd(c->seed, salt, i, 3);
    snprintf(f[6].s, sizeof f[6].s, "%02d-%03d-%03d-%04d", nation + 10, (int)(h % 900 + 100),
             (int)((h >> 16) % 900 + 100), (int)((h >> 32) % 9000 + 1000));
}

/* Customer row i (c_custkey = i + 1). */
static void cust_row(const void *ctx, int64_t i, Field *f) {
    const DimCtx *c = ctx;
    person_fields(c, SALT_CUST, "Customer", i, f);
    snprintf(f[7].s, sizeof f[7].s, "%s", SEGMENTS[uni(rnd(c->seed, SALT_CUST, i, 4), 0, 4)]);
}

/* Supplier row i (s_suppkey = i + 1). */
static void supp_row(const void *ctx, int64_t i, Field *f) {
    person_fields(ctx, SALT_SUPP, "Supplier", i, f);
}

/* Part row i (p_partkey = i + 1). */
static void part_row(const void *ctx, int64_t i, Field *f) {
    const DimCtx *c = ctx;
    uint64_t s = c->seed;
    f[0].v = (int32_t)(i + 1);
    snprintf(f[1].s, sizeof f[1].s, "%s %s", COLORS[uni(rnd(s, SALT_PART, i, 1), 0, NCOLORS - 1)],
             COLORS[uni(rnd(s, SALT_PART, i, 2), 0, NCOLORS - 1)]);
    int m = uni(rnd(s, SALT_PART, i, 3), 1, 5);
    int cat = uni(rnd(s, SALT_PART, i, 4), 1, 5);
    int brand = uni(rnd(s, SALT_PART, i, 5), 1, 40);
    snprintf(f[2].s, sizeof f[2].s, "MFGR#%d", m);
    snprintf(f[3].s, sizeof f[3].s, "MFGR#%d%d", m, cat);
    snprintf(f[4].s, sizeof f[4].s, "MFGR#%d%d%d", m, cat, brand);
    snprintf(f[5].s, sizeof f[5].s, "%s", COLORS[uni(rnd(s, SALT_PART, i, 6), 0, NCOLORS - 1)]);
    uint64_t h = rnd(s, SALT_PART, i, 7);
    snprintf(f[6].s, sizeof f[6].s, "%s %s %s", TYPE1[uni(h, 0, 5)], TYPE2[(h & 0xffff) % 5],
             TYPE3[((h >> 16) & 0xffff) % 5]);
    f[7].v = uni(rnd(s, SALT_PART, i, 8), 1, 50);
    h = rnd(s, SALT_PART, i, 9);
    snprintf(f[8].s, sizeof f[8].s, "%s %s", CONT1[uni(h, 0, 4)], CONT2[(h & 0xffff) % 8]);
}

/* Date row i (day i after 1992-01-01, a Wednesday). */
static void date_row(const void *ctx, int64_t i, Field *f) {
    const DimCtx *c = ctx;
    int32_t key = c->cal->datekey[i];
    int y = key / 10000, m = key / 100 % 100, d = key % 100;
    int dow = (int)((i + 3) % 7); /* 0 = Sunday */
    int doy = 1;
    for (int64_t k = i - 1; k >= 0 && c->cal->datekey[k] / 10000 == y; k--)
        doy++;
    f[0].v = key;
    snprintf(f[1].s, sizeof f[1].s, "%s %d, %d", MONTHS[m - 1], d, y);
    snprintf(f[2].s, sizeof f[2].s, "%s", WEEKDAYS[dow]);
    snprintf(f[3].s, sizeof f[3].s, "%s", MONTHS[m - 1]);
    f[4].v = y;
    f[5].v = y * 100 + m;
    snprintf(f[6].s, sizeof f[6].s, "%.3s%d", MONTHS[m - 1], y);
    f[7].v = dow + 1;
    f[8].v = d;
    f[9].v = doy;
    f[10].v = m;
    f[11].v = (doy - 1) / 7 + 1;
    const char *season = m == 12  ? "Christmas"
                         : m <= 2 ? "Winter"
                         : m <= 5 ? "Spring"
                         : m <= 8 ? "Summer"
                                  : "Fall";
    snprintf(f[12].s, sizeof f[12].s, "%s", season);
    f[13].v = dow == 6;
    f[14].v = d == month_days(y, m);
    f[15].v =
        (m == 1 && d == 1) || (m == 7 && d == 4) || (m == 11 && d == 11) || (m == 12 && d == 25);
    f[16].v = dow >= 1 && dow <= 5;
}

/* Free the build state of b (not b->t). */
static void dim_free(DimBuild *b) {
    for (int c = 0; c < b->ncols; c++) {
        if (b->arena) free(b->arena[c]);
        if (b->str_off) free(b->str_off[c]);
    }
    free(b->arena);
    free(b->arena_len);
    free(b->arena_cap);
    free(b->str_off);
}

/* Generate a dimension table of n rows with row(), write DIR/<name>.tbl and
 * DIR/bin/<name>/. Returns 0, or -1 with err set. */
static int gen_dim(const char *dir, const char *name, int ncols, const char *const *col_names,
                   const CatType *col_types, int64_t n, DimRowFn row, const void *ctx,
                   CatError *err) {
    DimBuild b = {0};
    int rc = -1;
    FILE *f = NULL;
    char *tbl = NULL, *bindir = NULL;
    Field *fl = calloc((size_t)ncols, sizeof *fl);
    const char **strs = NULL;
    size_t *lens = NULL;
    b.ncols = ncols;
    b.t = cat_table_new(name, ncols, col_names, col_types);
    b.arena = calloc((size_t)ncols, sizeof *b.arena);
    b.arena_len = calloc((size_t)ncols, sizeof *b.arena_len);
    b.arena_cap = calloc((size_t)ncols, sizeof *b.arena_cap);
    b.str_off = calloc((size_t)ncols, sizeof *b.str_off);
    if (!fl || !b.t || !b.arena || !b.arena_len || !b.arena_cap || !b.str_off) goto oom;
    for (int c = 0; c < ncols; c++) {
        CatColumn *col = &b.t->cols[c];
        cat_host_free(col->data);
        col->data = cat_host_alloc((size_t)n * sizeof(int32_t));
        col->n = n;
        if (!col->data) goto oom;
        if (col_types[c] == CAT_STRING) {
            b.arena_cap[c] = (size_t)n * 16 + 64;
            b.arena[c] = malloc(b.arena_cap[c]);
            b.str_off[c] = malloc((size_t)n * sizeof(int64_t) + 1);
            if (!b.arena[c] || !b.str_off[c]) goto oom;
        }
    }
    b.t->nrows = n;
    for (int64_t i = 0; i < n; i++) {
        row(ctx, i, fl);
        for (int c = 0; c < ncols; c++) {
            if (col_types[c] != CAT_STRING) {
                ((int32_t *)b.t->cols[c].data)[i] = fl[c].v;
                continue;
            }
            size_t l = strlen(fl[c].s) + 1;
            if (b.arena_len[c] + l > b.arena_cap[c]) {
                size_t cap = b.arena_cap[c] * 2 + l;
                char *p = realloc(b.arena[c], cap);
                if (!p) goto oom;
                b.arena[c] = p;
                b.arena_cap[c] = cap;
            }
            b.str_off[c][i] = (int64_t)b.arena_len[c];
            memcpy(b.arena[c] + b.arena_len[c], fl[c].s, l);
            b.arena_len[c] += l;
        }
    }
    /* Dictionaries: codes go straight into the column arrays. */
    strs = malloc((size_t)(n ? n : 1) * sizeof *strs);
    lens = malloc((size_t)(n ? n : 1) * sizeof *lens);
    if (!strs || !lens) goto oom;
    for (int c = 0; c < ncols; c++) {
        if (col_types[c] != CAT_STRING) continue;
        for (int64_t i = 0; i < n; i++) {
            strs[i] = b.arena[c] + b.str_off[c][i];
            lens[i] = strlen(strs[i]);
        }
        CatDict *d = cat_dict_build(strs, lens, n, b.t->cols[c].data);
        if (!d) goto oom;
        cat_dict_free(b.t->cols[c].dict);
        b.t->cols[c].dict = d;
    }
    /* The .tbl text. */
    tbl = cat_concat3(dir, "/", name);
    char *tblpath = tbl ? cat_concat3(tbl, ".tbl", "") : NULL;
    free(tbl);
    tbl = tblpath;
    bindir = cat_concat3(dir, "/bin/", name);
    if (!tbl || !bindir) goto oom;
    f = fopen(tbl, "wb");
    if (!f) {
        cat_err(err, "%s: cannot create: %s", tbl, strerror(errno));
        goto done;
    }
    for (int64_t i = 0; i < n; i++) {
        for (int c = 0; c < ncols; c++) {
            if (col_types[c] == CAT_STRING)
                fputs(b.arena[c] + b.str_off[c][i], f);
            else
                fprintf(f, "%d", (int)((int32_t *)b.t->cols[c].data)[i]);
            fputc('|', f);
        }
        fputc('\n', f);
    }
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    f = NULL;
    if (bad) {
        cat_err(err, "%s: write failed: %s", tbl, strerror(errno));
        goto done;
    }
    if (cat_mkdirs(bindir) != 0) {
        cat_err(err, "%s: cannot create folder: %s", bindir, strerror(errno));
        goto done;
    }
    rc = cat_write_binary(b.t, bindir, err);
    goto done;
oom:
    cat_err(err, "cat_gen_ssb: out of memory generating table '%s'", name);
done:
    if (f) fclose(f);
    free(fl);
    free(strs);
    free(lens);
    free(tbl);
    free(bindir);
    dim_free(&b);
    cat_table_free(b.t);
    return rc;
}

/* -------------------------------------------------------------- lineorder */

/* Shared state of lineorder generation. */
typedef struct LoJob {
    uint64_t seed;
    SsbSizes sz;
    const Calendar *cal;
    int64_t nblocks;
    int64_t *block_row;  /* nblocks + 1 first rows (prefix sum of lines) */
    int fds[LO_NCOLS];   /* the .bin files */
    int tbl_fd;          /* the .tbl file */
    int64_t round_first; /* first block of the current round */
    int nthreads;
    int32_t **cols;   /* per thread: LO_NCOLS arrays of 7 * GEN_BLOCK_ORDERS */
    char **text;      /* per thread: text of its block */
    size_t *text_len; /* per thread: bytes of text */
    int64_t tbl_off;  /* .tbl bytes written before this round */
    int *werr;        /* per thread: errno of a failed write, 0 if none */
} LoJob;

/* Lines of order o (0-based): 1..7. */
static int order_lines(uint64_t seed, int64_t o) {
    return uni(rnd(seed, SALT_LO, o, 0), 1, 7);
}

/* Pass 1 worker: line counts of blocks i, i + nthreads, ... into
 * block_row[b + 1]. */
static void lo_count_worker(void *arg, int i) {
    LoJob *j = arg;
    for (int64_t b = i; b < j->nblocks; b += j->nthreads) {
        int64_t lo = b * GEN_BLOCK_ORDERS, hi = lo + GEN_BLOCK_ORDERS;
        if (hi > j->sz.orders) hi = j->sz.orders;
        int64_t n = 0;
        for (int64_t o = lo; o < hi; o++)
            n += order_lines(j->seed, o);
        j->block_row[b + 1] = n;
    }
}

/* Pass 2 worker: generate block round_first + i into thread i's arrays and
 * text, and pwrite the arrays into the .bin files at the block's rows. */
static void lo_gen_worker(void *arg, int i) {
    LoJob *j = arg;
    int64_t b = j->round_first + i;
    j->text_len[i] = 0;
    if (b >= j->nblocks) return;
    int64_t olo = b * GEN_BLOCK_ORDERS, ohi = olo + GEN_BLOCK_ORDERS;
    if (ohi > j->sz.orders) ohi = j->sz.orders;
    int32_t *col[LO_NCOLS];
    for (int c = 0; c < LO_NCOLS; c++)
        col[c] = j->cols[i] + (size_t)c * 7 * GEN_BLOCK_ORDERS;
    uint64_t s = j->seed;
    int64_t r = 0;
    for (int64_t o = olo; o < ohi; o++) {
        int nl = order_lines(s, o);
        int32_t cust = uni(rnd(s, SALT_LO, o, 1), 1, (int32_t)j->sz.customers);
        int day = uni(rnd(s, SALT_LO, o, 2), 0, LAST_ORDER_DAY);
        int32_t prio = uni(rnd(s, SALT_LO, o, 3), 0, 4);
        int64_t r0 = r, total = 0;
        for (int l = 0; l < nl; l++, r++) {
            int64_t li = o * 8 + l;
            uint64_t h1 = rnd(s, SALT_LO, li, 4), h2 = rnd(s, SALT_LO, li, 5);
            uint64_t h3 = rnd(s, SALT_LO, li, 6), h4 = rnd(s, SALT_LO, li, 7);
            int32_t pk = uni(h1, 1, (int32_t)j->sz.parts);
            int32_t sk = uni(h2, 1, (int32_t)j->sz.suppliers);
            int32_t qty = uni(h3, 1, 50);
            int32_t disc = (int32_t)((h1 & 0xffffffffu) % 11);
            int32_t tax = (int32_t)((h2 & 0xffffffffu) % 9);
            int32_t commit = (int32_t)((h3 & 0xffffffffu) % 61) + 30;
            int32_t mode = uni(h4, 0, 6);
            int32_t price = part_price(pk);
            int32_t ext = qty * price;
            int32_t rev = (int32_t)((int64_t)ext * (100 - disc) / 100);
            total += (int64_t)rev * (100 + tax) / 100;
            col[0][r] = (int32_t)(o + 1);
            col[1][r] = l + 1;
            col[2][r] = cust;
            col[3][r] = pk;
            col[4][r] = sk;
            col[5][r] = j->cal->datekey[day];
            col[6][r] = prio;
            col[7][r] = 0;
            col[8][r] = qty;
            col[9][r] = ext;
            col[11][r] = disc;
            col[12][r] = rev;
            col[13][r] = price * 6 / 10;
            col[14][r] = tax;
            col[15][r] = j->cal->datekey[day + commit];
            col[16][r] = mode;
        }
        for (int64_t k = r0; k < r; k++)
            col[10][k] = (int32_t)total;
    }
    char *p = j->text[i];
    for (int64_t k = 0; j->tbl_fd >= 0 && k < r; k++) { /* the .tbl text, when written */
        for (int c = 0; c < LO_NCOLS; c++) {
            if (c == 6)
                p = put_str(p, PRIORITIES[col[c][k]]);
            else if (c == 16)
                p = put_str(p, SHIPMODES[col[c][k]]);
            else
                p = cat_put_int(p, col[c][k]);
            *p++ = '|';
        }
        *p++ = '\n';
    }
    j->text_len[i] = (size_t)(p - j->text[i]);
    int64_t off = j->block_row[b] * (int64_t)sizeof(int32_t);
    for (int c = 0; c < LO_NCOLS && !j->werr[i]; c++)
        j->werr[i] = pwrite_all(j->fds[c], col[c], (size_t)r * sizeof(int32_t), off);
}

/* Pass 2b worker: pwrite thread i's text at its offset in the round. */
static void lo_text_worker(void *arg, int i) {
    LoJob *j = arg;
    int64_t off = j->tbl_off;
    for (int k = 0; k < i; k++)
        off += (int64_t)j->text_len[k];
    if (j->text_len[i] && !j->werr[i])
        j->werr[i] = pwrite_all(j->tbl_fd, j->text[i], j->text_len[i], off);
}

/* Generate DIR/bin/lineorder/ and, with tbl, DIR/lineorder.tbl (without,
 * an old one is removed). Returns 0, or -1 with err set; *rows receives
 * the row count. */
static int gen_lineorder(const char *dir, uint64_t seed, SsbSizes sz, const Calendar *cal,
                         int tbl_too, int64_t *rows, CatError *err) {
    LoJob j = {0};
    int rc = -1;
    char *bindir = cat_concat3(dir, "/bin/", "lineorder");
    char *tbl = cat_concat3(dir, "/", "lineorder.tbl");
    char *path = NULL;
    j.seed = seed;
    j.sz = sz;
    j.cal = cal;
    j.tbl_fd = -1;
    for (int c = 0; c < LO_NCOLS; c++)
        j.fds[c] = -1;
    j.nblocks = (sz.orders + GEN_BLOCK_ORDERS - 1) / GEN_BLOCK_ORDERS;
    j.nthreads = cat_nthreads();
    if (j.nthreads > j.nblocks) j.nthreads = (int)j.nblocks;
    j.block_row = calloc((size_t)j.nblocks + 1, sizeof *j.block_row);
    j.cols = calloc((size_t)j.nthreads, sizeof *j.cols);
    j.text = calloc((size_t)j.nthreads, sizeof *j.text);
    j.text_len = calloc((size_t)j.nthreads, sizeof *j.text_len);
    j.werr = calloc((size_t)j.nthreads, sizeof *j.werr);
    if (!bindir || !tbl || !j.block_row || !j.cols || !j.text || !j.text_len || !j.werr) goto oom;
    for (int i = 0; i < j.nthreads; i++) {
        j.cols[i] = malloc((size_t)LO_NCOLS * 7 * GEN_BLOCK_ORDERS * sizeof(int32_t));
        j.text[i] = tbl_too ? malloc((size_t)7 * GEN_BLOCK_ORDERS * GEN_LO_ROW_BYTES) : NULL;
        if (!j.cols[i] || (tbl_too && !j.text[i])) goto oom;
    }
    if (cat_mkdirs(bindir) != 0) {
        cat_err(err, "%s: cannot create folder: %s", bindir, strerror(errno));
        goto done;
    }
    for (int c = 0; c < LO_NCOLS; c++) {
        char *base = cat_concat3(bindir, "/", LO_COLS[c]);
        path = base ? cat_concat3(base, ".bin", "") : NULL;
        free(base);
        if (!path) goto oom;
        j.fds[c] = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (j.fds[c] < 0) {
            cat_err(err, "%s: cannot create: %s", path, strerror(errno));
            goto done;
        }
        free(path);
        path = NULL;
    }
    if (!tbl_too && unlink(tbl) != 0 && errno != ENOENT) {
        cat_err(err, "%s: cannot remove: %s", tbl, strerror(errno));
        goto done;
    }
    j.tbl_fd = tbl_too ? open(tbl, O_WRONLY | O_CREAT | O_TRUNC, 0666) : -1;
    if (tbl_too && j.tbl_fd < 0) {
        cat_err(err, "%s: cannot create: %s", tbl, strerror(errno));
        goto done;
    }
    cat_parallel(j.nthreads, lo_count_worker, &j);
    for (int64_t b = 0; b < j.nblocks; b++)
        j.block_row[b + 1] += j.block_row[b];
    *rows = j.block_row[j.nblocks];
    for (j.round_first = 0; j.round_first < j.nblocks; j.round_first += j.nthreads) {
        cat_parallel(j.nthreads, lo_gen_worker, &j);
        cat_parallel(j.nthreads, lo_text_worker, &j);
        for (int i = 0; i < j.nthreads; i++) {
            if (j.werr[i]) {
                cat_err(err, "%s: write failed: %s", dir, strerror(j.werr[i]));
                goto done;
            }
            j.tbl_off += (int64_t)j.text_len[i];
        }
    }
    /* The two dictionaries of lineorder's STRING columns. */
    for (int c = 6; c <= 16; c += 10) {
        const char *const *v = c == 6 ? PRIORITIES : SHIPMODES;
        int nv = c == 6 ? 5 : 7;
        char buf[128];
        size_t len = 0;
        for (int k = 0; k < nv; k++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s\n", v[k]);
        char *base = cat_concat3(bindir, "/", LO_COLS[c]);
        path = base ? cat_concat3(base, ".dict", "") : NULL;
        free(base);
        if (!path) goto oom;
        if (cat_write_text(path, buf, len, err) != 0) goto done;
        free(path);
        path = NULL;
    }
    /* the columns' statistics beside them (cat_write_binary writes those
     * of the other tables), so that loading computes nothing */
    for (int c = 0; c < LO_NCOLS; c++)
        if (j.fds[c] >= 0 && close(j.fds[c]) != 0) {
            j.fds[c] = -1;
            cat_err(err, "%s: write failed: %s", bindir, strerror(errno));
            goto done;
        } else {
            j.fds[c] = -1;
        }
    {
        CatType types[LO_NCOLS];
        for (int c = 0; c < LO_NCOLS; c++)
            types[c] = c == 6 || c == 16 ? CAT_STRING : CAT_INT32;
        CatTableDef def = {.name = "lineorder",
                           .source = bindir,
                           .format = CAT_FMT_BINARY,
                           .ncols = LO_NCOLS,
                           .col_names = LO_COLS,
                           .col_types = types};
        if (cat_binary_write_stats(&def, err) != 0) goto done;
    }
    rc = 0;
    goto done;
oom:
    cat_err(err, "cat_gen_ssb: out of memory generating lineorder");
done:
    for (int c = 0; c < LO_NCOLS; c++)
        if (j.fds[c] >= 0 && close(j.fds[c]) != 0 && rc == 0)
            rc = cat_err(err, "%s: write failed: %s", bindir, strerror(errno));
    if (j.tbl_fd >= 0 && close(j.tbl_fd) != 0 && rc == 0)
        rc = cat_err(err, "%s: write failed: %s", tbl, strerror(errno));
    for (int i = 0; i < j.nthreads; i++) {
        if (j.cols) free(j.cols[i]);
        if (j.text) free(j.text[i]);
    }
    free(j.cols);
    free(j.text);
    free(j.text_len);
    free(j.werr);
    free(j.block_row);
    free(path);
    free(bindir);
    free(tbl);
    return rc;
}

/* ---------------------------------------------------------------- configs */

/* Append the YAML of one table (format "binary" from bin/<name> or "tbl"
 * from <name>.tbl) to buf at *len (buf has cap bytes). */
static void yaml_table(char *buf, size_t cap, size_t *len, const char *name, int binary, int ncols,
                       const char *const *cols, const CatType *types) {
    *len += (size_t)snprintf(
        buf + *len, cap - *len, "  - name: %s\n    source: %s%s%s\n    format: %s\n    columns:\n",
        name, binary ? "bin/" : "", name, binary ? "" : ".tbl", binary ? "binary" : "tbl");
    for (int c = 0; c < ncols; c++)
        *len += (size_t)snprintf(buf + *len, cap - *len, "      - {name: %s, type: %s}\n", cols[c],
                                 cat_type_name(types[c]));
}

/* Write DIR/gqp.yaml (binary) or DIR/gqp-tbl.yaml. Returns 0, or -1 with
 * err set. */
static int write_config(const char *dir, int binary, double sf, uint64_t seed, CatError *err) {
    CatType lo_types[LO_NCOLS];
    for (int c = 0; c < LO_NCOLS; c++)
        lo_types[c] = c == 6 || c == 16 ? CAT_STRING : CAT_INT32;
    char buf[8192];
    size_t len = (size_t)snprintf(buf, sizeof buf,
                                  "# Star Schema Benchmark, SF %g, seed %llu (cat_gen_ssb), "
                                  "tables from %s\ntables:\n",
                                  sf, (unsigned long long)seed,
                                  binary ? "binary columns under bin/" : "the .tbl files");
    yaml_table(buf, sizeof buf, &len, "lineorder", binary, LO_NCOLS, LO_COLS, lo_types);
    yaml_table(buf, sizeof buf, &len, "customer", binary, 8, CUST_COLS, CUST_TYPES);
    yaml_table(buf, sizeof buf, &len, "supplier", binary, 7, SUPP_COLS, SUPP_TYPES);
    yaml_table(buf, sizeof buf, &len, "part", binary, 9, PART_COLS, PART_TYPES);
    yaml_table(buf, sizeof buf, &len, "ddate", binary, 17, DATE_COLS, DATE_TYPES);
    char *path = cat_concat3(dir, "/", binary ? "gqp.yaml" : "gqp-tbl.yaml");
    if (!path) return cat_err(err, "cat_gen_ssb: out of memory");
    int rc = cat_write_text(path, buf, len, err);
    free(path);
    return rc;
}

/* Generate the SSB tables at scale factor sf under dir; see catalog.h.
 * Returns 0, or -1 with err set (files written so far are left). */
int cat_gen_ssb(const char *dir, double sf, uint64_t seed, unsigned flags, CatError *err) {
    if (!dir) return cat_err(err, "cat_gen_ssb: no folder");
    if (!(sf > 0.0) || sf > 1000.0)
        return cat_err(err, "cat_gen_ssb: scale factor %g out of range (0 < SF <= 1000)", sf);
    if (cat_mkdirs(dir) != 0)
        return cat_err(err, "%s: cannot create folder: %s", dir, strerror(errno));
    SsbSizes sz = ssb_sizes(sf);
    Calendar *cal = malloc(sizeof *cal);
    if (!cal) return cat_err(err, "cat_gen_ssb: out of memory");
    calendar_init(cal);
    DimCtx ctx = {seed, cal};
    int64_t rows = 0;
    int rc = gen_dim(dir, "ddate", 17, DATE_COLS, DATE_TYPES, NDAYS, date_row, &ctx, err);
    if (rc == 0)
        rc = gen_dim(dir, "customer", 8, CUST_COLS, CUST_TYPES, sz.customers, cust_row, &ctx, err);
    if (rc == 0)
        rc = gen_dim(dir, "supplier", 7, SUPP_COLS, SUPP_TYPES, sz.suppliers, supp_row, &ctx, err);
    if (rc == 0) rc = gen_dim(dir, "part", 9, PART_COLS, PART_TYPES, sz.parts, part_row, &ctx, err);
    int tbl_too = !(flags & CAT_GEN_NO_FACT_TBL);
    if (rc == 0) rc = gen_lineorder(dir, seed, sz, cal, tbl_too, &rows, err);
    if (rc == 0) rc = write_config(dir, 1, sf, seed, err);
    if (rc == 0 && tbl_too) rc = write_config(dir, 0, sf, seed, err);
    if (rc == 0 && !tbl_too) {
        /* no gqp-tbl.yaml: it would declare the missing lineorder.tbl */
        char *old = cat_concat3(dir, "/", "gqp-tbl.yaml");
        if (!old)
            rc = cat_err(err, "cat_gen_ssb: out of memory");
        else if (unlink(old) != 0 && errno != ENOENT)
            rc = cat_err(err, "%s: cannot remove: %s", old, strerror(errno));
        free(old);
    }
    free(cal);
    return rc;
}
