/*
 * Two pthreads share one thread-safe generator (system clock) for 10^6 IDs in all: no duplicate, and
 * each thread's IDs strictly increase. Also one batch per thread. Prints "threads: N passed, M failed".
 */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "snowmint.h"

#define PER_THREAD 500000
#define BATCH 4096

typedef struct {
    const snowmint_shared_generator *gen;
    uint64_t *ids;
    int errors;
} worker;

static void *run(void *arg) {
    worker *w = arg;
    for (size_t i = 0; i < PER_THREAD - BATCH; i++) {
        if (snowmint_shared_next_id(w->gen, &w->ids[i]) != SNOWMINT_RESULT_OK) w->errors++;
        if (i > 0 && w->ids[i] <= w->ids[i - 1]) w->errors++;
    }
    if (snowmint_shared_next_ids(w->gen, &w->ids[PER_THREAD - BATCH], BATCH) != SNOWMINT_RESULT_OK) w->errors++;
    return NULL;
}

static int cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

int main(void) {
    int passed = 0, failed = 0;
    snowmint_layout *layout = NULL;
    snowmint_shared_generator *gen = NULL;
    if (snowmint_layout_new_preset("twitter", &layout) != SNOWMINT_RESULT_OK ||
        snowmint_shared_generator_new(layout, 7, NULL, &gen) != SNOWMINT_RESULT_OK) {
        printf("threads: 0 passed, 1 failed (setup)\n");
        return 1;
    }
    uint64_t *all = malloc(sizeof(uint64_t) * 2 * PER_THREAD);
    if (!all) return 1;
    worker w[2] = {{gen, all, 0}, {gen, all + PER_THREAD, 0}};
    pthread_t t[2];
    for (int i = 0; i < 2; i++) pthread_create(&t[i], NULL, run, &w[i]);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    if (w[0].errors + w[1].errors == 0) passed++;
    else {
        failed++;
        fprintf(stderr, "FAIL: %d errors or non-increasing IDs\n", w[0].errors + w[1].errors);
    }
    qsort(all, 2 * PER_THREAD, sizeof all[0], cmp);
    size_t dups = 0;
    for (size_t i = 1; i < 2 * PER_THREAD; i++) dups += all[i] == all[i - 1];
    if (dups == 0) passed++;
    else {
        failed++;
        fprintf(stderr, "FAIL: %zu duplicate IDs among %d\n", dups, 2 * PER_THREAD);
    }
    free(all);
    snowmint_shared_generator_free(gen);
    snowmint_layout_free(layout);
    printf("threads: %d passed, %d failed (%d IDs from 2 threads)\n", passed, failed, 2 * PER_THREAD);
    return failed ? 1 : 0;
}
