/*
 * arena.c -- the bump allocator that owns every AST node and string of one
 * parse. Memory comes in chunks that double in size, so n allocations cost
 * O(log n) mallocs; everything is released at once by sql_arena_free().
 */
#include "sqlfront/sqlfront.h"

#include <stdlib.h>
#include <string.h>

/* One malloc'd block; data follows the header. */
typedef struct ArenaChunk {
    struct ArenaChunk *next;
    size_t cap;  /* usable bytes after the header */
    size_t used; /* bytes handed out so far */
} ArenaChunk;

struct SqlArena {
    ArenaChunk *head; /* chunk currently allocated from */
    size_t next_cap;  /* capacity of the next chunk to malloc */
};

#define ARENA_ALIGN 16
#define ARENA_FIRST_CHUNK 4096

/* Bytes of the chunk header rounded up so that data stays aligned. */
static size_t arena_header_bytes(void) {
    return (sizeof(ArenaChunk) + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
}

/* Returns a new empty arena owned by the caller (free with sql_arena_free),
 * or NULL when out of memory. */
SqlArena *sql_arena_new(void) {
    SqlArena *a = calloc(1, sizeof *a);
    if (a) a->next_cap = ARENA_FIRST_CHUNK;
    return a;
}

/* Releases the arena and everything allocated from it; NULL is a no-op. */
void sql_arena_free(SqlArena *a) {
    if (!a) return;
    ArenaChunk *c = a->head;
    while (c) {
        ArenaChunk *next = c->next;
        free(c);
        c = next;
    }
    free(a);
}

/* Returns `bytes` zeroed bytes aligned to 16, owned by the arena; NULL when
 * out of memory or when a is NULL. A request of 0 bytes still returns a
 * distinct valid pointer. */
void *sql_arena_alloc(SqlArena *a, size_t bytes) {
    if (!a) return NULL;
    if (bytes > SIZE_MAX / 2) return NULL;
    size_t need = (bytes + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    if (need == 0) need = ARENA_ALIGN;
    ArenaChunk *c = a->head;
    if (!c || c->cap - c->used < need) {
        size_t cap = a->next_cap;
        while (cap < need)
            cap *= 2;
        c = malloc(arena_header_bytes() + cap);
        if (!c) return NULL;
        c->cap = cap;
        c->used = 0;
        c->next = a->head;
        a->head = c;
        if (a->next_cap < ((size_t)1 << 26)) a->next_cap = cap * 2;
    }
    char *p = (char *)c + arena_header_bytes() + c->used;
    c->used += need;
    memset(p, 0, need);
    return p;
}

/* Returns a NUL-terminated copy of s[0..n) owned by the arena, or NULL when
 * out of memory. s may contain NUL bytes; they are copied as is. */
char *sql_arena_strndup(SqlArena *a, const char *s, size_t n) {
    if (n == SIZE_MAX) return NULL;
    char *p = sql_arena_alloc(a, n + 1);
    if (!p) return NULL;
    if (n) memcpy(p, s, n);
    p[n] = '\0';
    return p;
}
