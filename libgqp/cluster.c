/*
 * cluster.c -- key-ordered copies of a table for chunked execution
 * (chunk.c's co-sliced relations): a join key that a table does not hold
 * sorted (TPC-H's lineitem by l_partkey, orders by o_custkey) cannot cut
 * the table into one row range per chunk; a copy of the table's rows in
 * that key's order can. A copy is the stable permutation of the key
 * (prim_cpu_sort, once) and, column by column as chunked runs read them,
 * the columns gathered through it (prim_cpu_gather); dictionaries and
 * statistics are the table's own (a permutation does not change them).
 *
 * Copies are kept for the next chunked run over the same table and key
 * (the sort is most of their cost), at most CLUSTER_MAX of them holding
 * at most a quarter of the host memory (CLUSTER_RAM_SHARE), and
 * dropped when their table changes or goes (gqp_cluster_forget, from the
 * same places that drop its columns from the GPU cache) or when the
 * database's version moves on (every CREATE / INSERT / UPDATE / DELETE /
 * DROP). Each copy remembers how often a chunked plan has asked for it
 * (gqp_cluster_wanted), so that --device auto can spread its build cost
 * over the runs that use it.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "libgqp/internal.h"
#include "operators/operators.h"

/* TUNING: copies kept at once (the least recently used that no running
 * chunked plan holds goes first); above the 1 + CHUNK_MAX_CO tables one
 * chunked run can cut, so that a run always finds room. */
#define CLUSTER_MAX 10
/* TUNING: host bytes the copies may hold together (permutations and
 * gathered columns): a quarter of the machine's memory, so that copies
 * never crowd out the tables they copy; GQP_CLUSTER_BYTES=N sets it (tests).
 * Beyond it the least recently used copies no running plan reads go; the
 * copies a running plan reads stay even above it. */
#define CLUSTER_RAM_SHARE 4

typedef struct GqpCluster {
    const CatTable *src; /* the table (compared by address, name, rows) */
    char *src_name;
    int64_t nrows;
    const void *key_data; /* src's key column when the copy was made */
    int key;
    uint64_t version; /* db->version when made */
    uint64_t used;    /* last use (db's cluster clock) */
    int64_t wanted;   /* chunked plans that asked for it */
    int pins;         /* chunked runs reading it now (gqp_cluster_open / _close) */
    int64_t *perm;    /* perm[i]: src row of the copy's row i */
    CatTable *copy;   /* src's columns, filled on first read (data NULL until then) */
    size_t bytes;     /* host bytes held: perm and the filled columns */
} GqpCluster;

/* TUNING: copies asked for but not made, remembered at once (the least
 * recently asked for goes first). */
#define CLUSTER_WANT_MAX 16

/* A copy chunked plans asked for that was not made: --device auto priced
 * it and chose otherwise. Its count spreads the build cost over the asks,
 * so that a query run again and again makes it once the work done
 * without it adds up (ski rental, as CostInputs.reads for column copies). */
typedef struct GqpWant {
    const CatTable *src; /* compared by address, rows, key data, version */
    const void *key_data;
    int64_t nrows;
    int key;
    uint64_t version;
    int64_t wanted;
    uint64_t used; /* last ask (db's cluster clock) */
} GqpWant;

struct GqpClusters {
    GqpCluster c[CLUSTER_MAX];
    int n;
    GqpWant want[CLUSTER_WANT_MAX];
    int nwant;
    uint64_t clock;
    size_t bytes, cap; /* held by every copy; the most they may hold */
};

/* The copies' byte cap (CLUSTER_RAM_SHARE, GQP_CLUSTER_BYTES). */
static size_t cluster_cap(void) {
    const char *e = getenv("GQP_CLUSTER_BYTES");
    if (e && *e) return (size_t)strtoull(e, NULL, 10);
    long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || psz <= 0) return (size_t)4 << 30;
    return (size_t)pages * (size_t)psz / CLUSTER_RAM_SHARE;
}

static void *h_alloc(void *ud, size_t b) {
    (void)ud;
    return malloc(b ? b : 1);
}

static void h_free(void *ud, void *p) {
    (void)ud;
    free(p);
}

/* Free c's copy, after dropping its columns from the GPU cache and their
 * page locks (a chunked run streams a copy's columns as a table's). */
static void cluster_free(gqp *db, GqpCluster *c) {
    if (c->copy) {
        for (int k = 0; k < c->copy->ncols; k++) {
            exec_device_forget(db->dev, c->copy->cols[k].data, -1);
            exec_device_forget(db->dev, c->copy->cols[k].valid, -1);
            free(c->copy->cols[k].data);
            free(c->copy->cols[k].valid);
        }
        free(c->copy->cols);
        free(c->copy);
    }
    free(c->perm);
    free(c->src_name);
    if (db->clusters && db->clusters->bytes >= c->bytes) db->clusters->bytes -= c->bytes;
    memset(c, 0, sizeof *c);
}

/* Drop the least recently used copy no running plan reads (the copy keep
 * aside: compared by its table, as entries move when one goes): 1, or 0
 * when there is none. */
static int cluster_drop_lru(gqp *db, const CatTable *keep) {
    struct GqpClusters *cs = db->clusters;
    int old = -1;
    for (int i = 0; i < cs->n; i++)
        if (!cs->c[i].pins && cs->c[i].copy != keep && (old < 0 || cs->c[i].used < cs->c[old].used))
            old = i;
    if (old < 0) return 0;
    cluster_free(db, &cs->c[old]);
    cs->c[old] = cs->c[--cs->n];
    return 1;
}

/* Drop copies (cluster_drop_lru) until add more bytes fit under the cap,
 * or none is left to drop. */
static void cluster_make_room(gqp *db, size_t add, const CatTable *keep) {
    struct GqpClusters *cs = db->clusters;
    while (cs->bytes + add > cs->cap && cluster_drop_lru(db, keep)) {
    }
}

size_t gqp_cluster_bytes(gqp *db, int *ncopies) {
    struct GqpClusters *cs = db->clusters;
    if (ncopies) *ncopies = cs ? cs->n : 0;
    return cs ? cs->bytes : 0;
}

int gqp_chunk_cluster_mode(const char *s) {
    return strcasecmp(s, "off") == 0    ? 0
           : strcasecmp(s, "auto") == 0 ? 1
           : strcasecmp(s, "on") == 0   ? 2
                                        : -1;
}

int gqp_device_mode(const char *s) {
    return strcasecmp(s, "cpu") == 0    ? GQP_DEVICE_CPU
           : strcasecmp(s, "gpu") == 0  ? GQP_DEVICE_GPU
           : strcasecmp(s, "auto") == 0 ? GQP_DEVICE_AUTO
                                        : -1;
}

int gqp_agg_mode(const char *s) {
    return strcasecmp(s, "sort") == 0    ? LOWER_AGG_SORT
           : strcasecmp(s, "dense") == 0 ? LOWER_AGG_DENSE
           : strcasecmp(s, "auto") == 0  ? LOWER_AGG_AUTO
                                         : -1;
}

int gqp_cluster_ok(CatTable *t, int col) {
    CatError err;
    if (!t || col < 0 || col >= t->ncols || t->nrows <= 1 || cat_column_use(t, col, &err) != 0)
        return 0;
    const CatColumn *c = &t->cols[col];
    if (c->stats_cover || !c->data) return 0; /* a chunk's slice */
    if (c->type != CAT_INT32 && c->type != CAT_INT64 && c->type != CAT_DATE &&
        c->type != CAT_DECIMAL)
        return 0;
    for (int64_t i = 0; c->valid && i < c->n; i++)
        if (!c->valid[i]) return 0; /* a NULL key: no single key order */
    return 1;
}

/* db's entry for (t, key) when it is still t's; drops a stale one. */
static GqpCluster *cluster_find(gqp *db, const CatTable *t, int key) {
    struct GqpClusters *cs = db->clusters;
    for (int i = 0; cs && i < cs->n; i++) {
        GqpCluster *c = &cs->c[i];
        if (c->src != t || c->key != key) continue;
        if (c->pins) return c; /* a running chunked plan reads it */
        if (c->version == db->version && c->nrows == t->nrows && t->name &&
            strcmp(c->src_name, t->name) == 0 && key < t->ncols && c->key_data == t->cols[key].data)
            return c;
        cluster_free(db, c);
        cs->c[i] = cs->c[--cs->n];
        return NULL;
    }
    return NULL;
}

/* The index of db's ask for the copy of (t, key) not made, or -1. */
static int want_find(gqp *db, const CatTable *t, int key) {
    struct GqpClusters *cs = db->clusters;
    for (int i = 0; cs && i < cs->nwant; i++) {
        const GqpWant *w = &cs->want[i];
        if (w->src == t && w->key == key && w->nrows == t->nrows && w->version == db->version &&
            key < t->ncols && w->key_data == t->cols[key].data)
            return i;
    }
    return -1;
}

/* How often the copy of (t, key) was asked for before it was made (its
 * ask forgotten). */
static int64_t want_take(gqp *db, const CatTable *t, int key) {
    struct GqpClusters *cs = db->clusters;
    int i = want_find(db, t, key);
    if (i < 0) return 0;
    int64_t n = cs->want[i].wanted;
    cs->want[i] = cs->want[--cs->nwant];
    return n;
}

int64_t gqp_cluster_wanted(gqp *db, const CatTable *t, int key, int *made) {
    GqpCluster *c = cluster_find(db, t, key);
    *made = c != NULL;
    if (c) return ++c->wanted;
    if (!t || key < 0 || key >= t->ncols) return 1;
    if (!db->clusters && !(db->clusters = calloc(1, sizeof *db->clusters)))
        return 1; /* only a pricing hint is lost */
    struct GqpClusters *cs = db->clusters;
    int i = want_find(db, t, key);
    if (i < 0) {
        if (cs->nwant < CLUSTER_WANT_MAX)
            i = cs->nwant++;
        else
            for (int k = i = 0; k < cs->nwant; k++)
                if (cs->want[k].used < cs->want[i].used) i = k;
        cs->want[i] = (GqpWant){t, t->cols[key].data, t->nrows, key, db->version, 0, 0};
    }
    cs->want[i].used = ++cs->clock;
    return ++cs->want[i].wanted;
}

int gqp_cluster_open(gqp *db, CatTable *t, int key, CatTable **copy) {
    *copy = NULL;
    if (!db->clusters && !(db->clusters = calloc(1, sizeof *db->clusters)))
        return gqp_set_error(db, GQP_NOMEM, "out of memory");
    struct GqpClusters *cs = db->clusters;
    if (!cs->cap) cs->cap = cluster_cap();
    GqpCluster *c = cluster_find(db, t, key);
    if (!c) {
        if (!gqp_cluster_ok(t, key))
            return gqp_set_error(db, GQP_ERROR,
                                 "Execution Error: chunked execution: %s.%s cannot order a copy "
                                 "of the table (not an integer key without NULLs)",
                                 t->name, key >= 0 && key < t->ncols ? t->cols[key].name : "?");
        /* the least recently used goes */
        if (cs->n == CLUSTER_MAX && !cluster_drop_lru(db, NULL))
            return gqp_set_error(db, GQP_ERROR,
                                 "Execution Error: chunked execution: too many ordered copies");
        cluster_make_room(db, sizeof(int64_t) * (size_t)t->nrows, NULL);
        GqpCluster nc;
        memset(&nc, 0, sizeof nc);
        nc.src = t;
        nc.key = key;
        nc.nrows = t->nrows;
        nc.key_data = t->cols[key].data;
        nc.version = db->version;
        nc.wanted = want_take(db, t, key);
        nc.src_name = strdup(t->name ? t->name : "");
        nc.perm = malloc(sizeof *nc.perm * (size_t)t->nrows);
        nc.copy = calloc(1, sizeof *nc.copy);
        CatColumn *cols = calloc((size_t)t->ncols + 1, sizeof *cols);
        if (!nc.src_name || !nc.perm || !nc.copy || !cols) {
            free(cols);
            cluster_free(db, &nc);
            return gqp_set_error(db, GQP_NOMEM, "out of memory");
        }
        PrimCtx ctx;
        memset(&ctx, 0, sizeof ctx);
        ctx.nthreads = db->nthreads;
        ctx.alloc = h_alloc;
        ctx.free = h_free;
        const CatColumn *kc = &t->cols[key];
        PrimVec kv = {op_prim_type(kc->type), t->nrows, kc->data, NULL};
        uint8_t asc = 0;
        if (prim_cpu_sort(&ctx, &kv, &asc, 1, t->nrows, nc.perm) != 0) {
            free(cols);
            cluster_free(db, &nc);
            return gqp_set_error(db, GQP_ERROR, "Execution Error: ordering a copy of %s: %s",
                                 t->name, ctx.err);
        }
        /* the copy: t's columns, empty until read; stats are t's (a
         * permutation keeps them), except the order */
        *nc.copy = *t;
        nc.copy->name = nc.src_name;
        nc.copy->source = NULL;
        nc.copy->indexes = NULL;
        nc.copy->nindexes = 0;
        for (int k = 0; k < t->ncols; k++) {
            cols[k] = t->cols[k];
            cols[k].data = NULL;
            cols[k].valid = NULL;
            cols[k].cap = 0;
            cols[k].lazy = NULL;
            cols[k].map = NULL;
            cols[k].map_len = 0;
            cols[k].from_file = 0;
            cols[k].stats.sorted = k == key ? 1 : 0;
        }
        nc.copy->cols = cols;
        nc.copy->stale = 0;
        nc.bytes = sizeof *nc.perm * (size_t)t->nrows;
        cs->bytes += nc.bytes;
        cs->c[cs->n++] = nc;
        /* the fill may drop other copies, moving this entry: found again */
        if (gqp_cluster_fill(db, nc.copy, key) != GQP_OK)
            return db->errcode ? db->errcode : GQP_ERROR;
        for (int i = 0; i < cs->n && !c; i++)
            if (cs->c[i].copy == nc.copy) c = &cs->c[i];
        if (!c)
            return gqp_set_error(db, GQP_ERROR, "Execution Error: chunked execution: no such copy");
    }
    c->used = ++cs->clock;
    c->pins++;
    *copy = c->copy;
    return GQP_OK;
}

void gqp_cluster_close(gqp *db, CatTable *copy) {
    struct GqpClusters *cs = db->clusters;
    for (int i = 0; cs && i < cs->n; i++)
        if (cs->c[i].copy == copy && cs->c[i].pins > 0) cs->c[i].pins--;
}

int gqp_cluster_fill(gqp *db, CatTable *copy, int col) {
    struct GqpClusters *cs = db->clusters;
    GqpCluster *c = NULL;
    for (int i = 0; cs && i < cs->n && !c; i++)
        if (cs->c[i].copy == copy) c = &cs->c[i];
    if (!c || col < 0 || col >= copy->ncols)
        return gqp_set_error(db, GQP_ERROR, "Execution Error: chunked execution: no such copy");
    CatColumn *d = &copy->cols[col];
    if (d->data || c->nrows == 0) return GQP_OK;
    CatTable *t = (CatTable *)c->src;
    CatError err;
    if (cat_column_use(t, col, &err) != 0) return gqp_set_error(db, GQP_ERROR, "%s", err.msg);
    const CatColumn *s = &t->cols[col];
    size_t w = cat_type_width(s->type);
    size_t add = w * (size_t)c->nrows + (s->valid ? (size_t)c->nrows : 0);
    cluster_make_room(db, add, copy);
    c = NULL; /* the entries may have moved */
    for (int i = 0; i < cs->n && !c; i++)
        if (cs->c[i].copy == copy) c = &cs->c[i];
    if (!c) return gqp_set_error(db, GQP_ERROR, "Execution Error: chunked execution: no such copy");
    void *data = malloc(w * (size_t)c->nrows);
    uint8_t *valid = s->valid ? malloc((size_t)c->nrows) : NULL;
    if (!data || (s->valid && !valid)) {
        free(data);
        free(valid);
        return gqp_set_error(db, GQP_NOMEM, "out of memory");
    }
    PrimCtx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.nthreads = db->nthreads;
    ctx.alloc = h_alloc;
    ctx.free = h_free;
    PrimVec sv = {op_prim_type(s->type), c->nrows, s->data, s->valid};
    PrimVec dv = {sv.type, c->nrows, data, valid};
    if (w != prim_type_width(sv.type) || prim_cpu_gather(&ctx, &sv, c->perm, c->nrows, &dv) != 0) {
        free(data);
        free(valid);
        return gqp_set_error(db, GQP_ERROR, "Execution Error: ordering a copy of %s.%s: %s",
                             t->name, s->name, ctx.err[0] ? ctx.err : "column width");
    }
    /* the rest of the column as t holds it now (the dictionary, loaded on
     * first use of a binary column) */
    c->bytes += add;
    cs->bytes += add;
    CatStats st = d->stats;
    *d = *s;
    d->data = data;
    d->valid = valid;
    d->cap = 0;
    d->lazy = NULL;
    d->map = NULL;
    d->map_len = 0;
    d->from_file = 0;
    d->stats = s->stats;
    d->stats.sorted = st.sorted;
    return GQP_OK;
}

void gqp_cluster_forget(gqp *db, const CatTable *t) {
    struct GqpClusters *cs = db->clusters;
    for (int i = 0; cs && i < cs->n; i++)
        if (cs->c[i].src == t && !cs->c[i].pins) {
            cluster_free(db, &cs->c[i]);
            cs->c[i--] = cs->c[--cs->n];
        }
    for (int i = 0; cs && i < cs->nwant; i++)
        if (cs->want[i].src == t) cs->want[i--] = cs->want[--cs->nwant];
}

void gqp_cluster_free_all(gqp *db) {
    struct GqpClusters *cs = db->clusters;
    for (int i = 0; cs && i < cs->n; i++)
        cluster_free(db, &cs->c[i]);
    free(cs);
    db->clusters = NULL;
}
