/*
 * gqp_arrow.h -- Apache Arrow in and out of libgqp through the Arrow C Data
 * Interface and C Stream Interface (https://arrow.apache.org/docs/format/
 * CDataInterface.html, .../CStreamInterface.html): a stable ABI of three
 * structs, so neither gqp nor its users need an Arrow library to exchange
 * columnar data with pyarrow, pandas, Polars, DuckDB, nanoarrow, ...
 *
 * Out: gqp_query_arrow() / gqp_stmt_arrow_stream() give a statement's whole
 * result as an ArrowArrayStream of record batches (a struct array per
 * batch, one child per result column). In: gqp_register_arrow() /
 * gqp_register_arrow_array() copy an Arrow stream or array into a new gqp
 * table that SQL then reads like any other (on the CPU and the GPU).
 *
 * Type mapping (docs/arrow.md has the full table):
 *
 *   gqp                Arrow out              Arrow in
 *   INT32              int32 "i"              int8/16/32, uint8/16
 *   INT64              int64 "l"              int64, uint32, uint64 (<= INT64_MAX), null "n"
 *   FLOAT32 / FLOAT64  float "f" / double "g"  float / double
 *   DECIMAL(p,s)       decimal128(18,s)       decimal32/64/128(p,s), s <= 18 and
 *                      (38,s) past 18 digits  every value within 18 digits
 *   DATE               date32 "tdD"           date32, date64 (whole days, floored)
 *   BOOL               boolean "b"            boolean
 *   TEXT               utf8 "u" (decoded)     utf8, large_utf8, dictionary of
 *                                             either (pandas categoricals)
 *   NULL result column null "n"
 *
 * SQL NULLs are validity bitmaps both ways. Any other Arrow type (nested,
 * timestamp, binary, ...) is refused with an error naming the column.
 *
 * The struct definitions below are the Arrow specification's own ABI, under
 * the guards the specification asks every producer and consumer to use, so
 * this header coexists with Arrow's, nanoarrow's or DuckDB's copy.
 */
#ifndef GQP_ARROW_H
#define GQP_ARROW_H

#include <stdint.h>

#include "gqp.h"

#ifdef __cplusplus
extern "C" {
#endif

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
    /* Array type description */
    const char *format;
    const char *name;
    const char *metadata;
    int64_t flags;
    int64_t n_children;
    struct ArrowSchema **children;
    struct ArrowSchema *dictionary;

    /* Release callback */
    void (*release)(struct ArrowSchema *);
    /* Opaque producer-specific data */
    void *private_data;
};

struct ArrowArray {
    /* Array data description */
    int64_t length;
    int64_t null_count;
    int64_t offset;
    int64_t n_buffers;
    int64_t n_children;
    const void **buffers;
    struct ArrowArray **children;
    struct ArrowArray *dictionary;

    /* Release callback */
    void (*release)(struct ArrowArray *);
    /* Opaque producer-specific data */
    void *private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
    /* Callbacks providing stream functionality */
    int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
    int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
    const char *(*get_last_error)(struct ArrowArrayStream *);

    /* Release callback */
    void (*release)(struct ArrowArrayStream *);

    /* Opaque producer-specific data */
    void *private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

/* Rows per record batch of an exported stream (fewer where a TEXT column's
 * bytes in one batch would pass 2 GiB, utf8's 32-bit offsets). */
#define GQP_ARROW_BATCH_ROWS 65536

/*
 * Export the whole result of stmt as an Arrow stream into *out (which the
 * caller allocates; its previous contents are ignored). A statement not run
 * yet is run first (as by gqp_step()); one already stepped exports all its
 * rows whatever row is current. DDL and DML give a stream of zero columns
 * and no batch. The data is copied: the stream and every schema and batch
 * it hands out own their memory and stay valid after gqp_reset(),
 * gqp_finalize() and gqp_close(); the consumer releases each (out->release,
 * then each batch's and schema's release), as the specification says.
 * Returns GQP_OK, or an error code with db's message (gqp_errmsg()) and
 * out->release NULL.
 */
int gqp_stmt_arrow_stream(gqp_stmt *stmt, struct ArrowArrayStream *out);

/*
 * Run every statement of sql in order (as gqp_prepare() + gqp_step() each)
 * and export the last one's result into *out, as gqp_stmt_arrow_stream().
 * Returns GQP_OK, or the first error's code with db's message (statements
 * before it have run) and out->release NULL.
 */
int gqp_query_arrow(gqp *db, const char *sql, struct ArrowArrayStream *out);

/*
 * Copy the Arrow stream into a new table `name` of db, which SQL reads like
 * a CREATE TABLE table (in memory; gone at gqp_close()). The stream must
 * yield struct arrays (record batches); each field becomes a column of the
 * same name (type mapping above). The call consumes the stream: it calls
 * stream->release (and the release of every schema and batch it took)
 * before it returns, whatever the outcome. All or nothing: on error (the
 * name is taken by a table or view, a column's type has no gqp counterpart,
 * a value does not fit, the stream's get_next fails, out of memory) no
 * table is added, and db's message names the column at fault. Returns
 * GQP_OK or an error code (GQP_MISUSE for a NULL or released argument).
 */
int gqp_register_arrow(gqp *db, const char *name, struct ArrowArrayStream *stream);

/* gqp_register_arrow_ex flags: drop a table of the same name once the new
 * one is complete (not a view), in one step under db's lock. */
#define GQP_ARROW_REPLACE 1

/*
 * gqp_register_arrow with flags (0 or GQP_ARROW_REPLACE). With
 * GQP_ARROW_REPLACE an existing table `name` is replaced only when the new
 * one is complete: on error the old table stays as it was.
 */
int gqp_register_arrow_ex(gqp *db, const char *name, struct ArrowArrayStream *stream, int flags);

/*
 * The same for one record batch: array is a struct array described by
 * schema. Both are consumed (released before the call returns).
 */
int gqp_register_arrow_array(gqp *db, const char *name, struct ArrowSchema *schema,
                             struct ArrowArray *array);

#ifdef __cplusplus
}
#endif
#endif /* GQP_ARROW_H */
