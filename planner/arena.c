/*
 * arena.c -- the plan arena: every bound expression, table, label and
 * dictionary of one statement's plan, released at once.
 */
#include <stdlib.h>
#include <string.h>

#include "planner/planner.h"

#define PLAN_BLOCK (64 * 1024)

typedef struct PlanBlock {
    struct PlanBlock *next;
    size_t used, cap;
    max_align_t data[];
} PlanBlock;

typedef struct PlanDictNode {
    struct PlanDictNode *next;
    CatDict *dict;
} PlanDictNode;

struct PlanArena {
    PlanBlock *head;
    PlanDictNode *dicts;
    void *memo; /* plan_arena_memo */
};

void **plan_arena_memo(PlanArena *a) {
    return &a->memo;
}

/* New empty arena, or NULL when out of memory. Free with plan_arena_free. */
PlanArena *plan_arena_new(void) {
    return calloc(1, sizeof(PlanArena));
}

/* Release every block and every dictionary registered with the arena. */
void plan_arena_free(PlanArena *a) {
    if (!a) return;
    for (PlanBlock *b = a->head; b;) {
        PlanBlock *n = b->next;
        free(b);
        b = n;
    }
    for (PlanDictNode *d = a->dicts; d;) {
        PlanDictNode *n = d->next;
        cat_dict_free(d->dict);
        free(d);
        d = n;
    }
    free(a);
}

/* Zeroed, max-aligned memory owned by the arena; NULL when out of memory. */
void *plan_alloc(PlanArena *a, size_t bytes) {
    size_t need = (bytes + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
    if (need == 0) need = sizeof(max_align_t);
    if (!a->head || a->head->cap - a->head->used < need) {
        size_t cap = need > PLAN_BLOCK ? need : PLAN_BLOCK;
        PlanBlock *b = malloc(sizeof(PlanBlock) + cap);
        if (!b) return NULL;
        b->next = a->head;
        b->used = 0;
        b->cap = cap;
        a->head = b;
    }
    void *p = (char *)a->head->data + a->head->used;
    a->head->used += need;
    memset(p, 0, bytes);
    return p;
}

/* Copy of s in the arena (NULL for NULL or out of memory). */
char *plan_strdup(PlanArena *a, const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s);
    char *p = plan_alloc(a, n + 1);
    if (p) memcpy(p, s, n + 1);
    return p;
}

/* Hand dictionary d to the arena, which frees it with the plan. Returns 0,
 * or -1 (and frees d) when out of memory. */
int plan_arena_own_dict(PlanArena *a, CatDict *d) {
    PlanDictNode *n = malloc(sizeof *n);
    if (!n) {
        cat_dict_free(d);
        return -1;
    }
    n->dict = d;
    n->next = a->dicts;
    a->dicts = n;
    return 0;
}
