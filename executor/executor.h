/*
 * executor.h -- runs a placed primitive DAG: nodes in topological (index)
 * order, each on the device its placement names, intermediates freed after
 * their last consumer, result columns handed back as host vectors.
 */
#ifndef GQP_EXECUTOR_H
#define GQP_EXECUTOR_H

#include "planner/planner.h"

/* One result column on the host. The executor result owns data/valid. */
typedef struct ExecColumn {
    PrimVec vec;        /* vec.n = rows */
    CatType ltype;
    const CatDict *dict; /* STRING: codes refer to it (owned by plan or catalog) */
} ExecColumn;

typedef struct ExecResult {
    int ncols;
    int64_t nrows;
    ExecColumn *cols;
} ExecResult;

typedef struct ExecOptions {
    int nthreads;       /* CPU worker threads (>= 1) */
} ExecOptions;

/*
 * Execute dag. On success returns 0 and fills *res (release with
 * exec_result_free); measured time, rows and bytes are written into the
 * DAG's nodes. On error returns -1 with a stage-named message in errbuf
 * ("Execution Error: ...", "Device Error: ...") and frees every
 * intermediate.
 */
int exec_run(Dag *dag, const ExecOptions *opt, ExecResult *res, char *errbuf, size_t errcap);
void exec_result_free(ExecResult *res);

#endif /* GQP_EXECUTOR_H */
