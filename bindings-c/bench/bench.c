/*
 * C-side benchmark: snowmint_next_id / snowmint_shared_next_id / batches from C, next to
 * clock_gettime(CLOCK_REALTIME) alone and libuuid's uuid_generate_time. Prints "RESULT name ns" lines
 * (best of several repetitions); bench.sh runs it alternately with the Rust core's figures and prints
 * the table with ratios. Not a test.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <uuid/uuid.h>

#include "snowmint.h"

#define REPS 9
static volatile uint64_t sink;

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static snowmint_layout *layout;

static double bench_clock(long n) {
    struct timespec ts;
    uint64_t acc = 0;
    double t = now_s();
    for (long i = 0; i < n; i++) {
        clock_gettime(CLOCK_REALTIME, &ts);
        acc += (uint64_t)ts.tv_nsec;
    }
    t = now_s() - t;
    sink = acc;
    return t * 1e9 / (double)n;
}

static double bench_uuid(long n) {
    uuid_t u;
    uint64_t acc = 0;
    double t = now_s();
    for (long i = 0; i < n; i++) {
        uuid_generate_time(u);
        acc += u[0];
    }
    t = now_s() - t;
    sink = acc;
    return t * 1e9 / (double)n;
}

static double bench_plain(long n) {
    snowmint_generator *g = NULL;
    if (snowmint_generator_new(layout, 7, NULL, &g) != SNOWMINT_RESULT_OK) exit(1);
    uint64_t id, acc = 0;
    double t = now_s();
    for (long i = 0; i < n; i++) {
        if (snowmint_next_id(g, &id) != SNOWMINT_RESULT_OK) exit(1);
        acc ^= id;
    }
    t = now_s() - t;
    sink = acc;
    snowmint_generator_free(g);
    return t * 1e9 / (double)n;
}

static double bench_shared(long n) {
    snowmint_shared_generator *g = NULL;
    if (snowmint_shared_generator_new(layout, 7, NULL, &g) != SNOWMINT_RESULT_OK) exit(1);
    uint64_t id, acc = 0;
    double t = now_s();
    for (long i = 0; i < n; i++) {
        if (snowmint_shared_next_id(g, &id) != SNOWMINT_RESULT_OK) exit(1);
        acc ^= id;
    }
    t = now_s() - t;
    sink = acc;
    snowmint_shared_generator_free(g);
    return t * 1e9 / (double)n;
}

/* Per ID, batches of 4096 (one clock read and one CAS per batch). */
static double bench_batch(long batches) {
    static uint64_t buf[4096];
    snowmint_shared_generator *g = NULL;
    if (snowmint_shared_generator_new(layout, 7, NULL, &g) != SNOWMINT_RESULT_OK) exit(1);
    uint64_t acc = 0;
    double t = now_s();
    for (long i = 0; i < batches; i++) {
        if (snowmint_shared_next_ids(g, buf, 4096) != SNOWMINT_RESULT_OK) exit(1);
        acc ^= buf[i & 4095];
    }
    t = now_s() - t;
    sink = acc;
    snowmint_shared_generator_free(g);
    return t * 1e9 / ((double)batches * 4096);
}

static double best(double (*f)(long), long n) {
    double b = 1e30;
    for (int r = 0; r < REPS; r++) {
        double v = f(n);
        if (v < b) b = v;
    }
    return b;
}

int main(void) {
    if (snowmint_layout_new_preset("twitter", &layout) != SNOWMINT_RESULT_OK) return 1;
    /* Within capacity: 10^6 IDs put logical time ~250 ms ahead of the clock, well inside max_ahead. */
    printf("RESULT clock_gettime_realtime %.3f\n", best(bench_clock, 500000));
    printf("RESULT c_next_id_plain %.3f\n", best(bench_plain, 300000));
    printf("RESULT c_next_id_shared %.3f\n", best(bench_shared, 300000));
    printf("RESULT c_next_ids_4096_per_id %.3f\n", best(bench_batch, 100));
    printf("RESULT libuuid_generate_time %.3f\n", best(bench_uuid, 20000));
    snowmint_layout_free(layout);
    /* A layout with room for the loop (2^19 IDs a 1 ms tick, as the other runtimes' benches use): the
     * loop mints in the clock's own tick, out of windows, borrowing no tick. */
    struct snowmint_layout_config capacity;
    if (snowmint_layout_config_default(&capacity) != SNOWMINT_RESULT_OK) return 1;
    capacity.timestamp_bits = 39;
    capacity.node_bits = 5;
    capacity.sequence_bits = 19;
    capacity.epoch_ms = 1700000000000ULL;
    if (snowmint_layout_new(&capacity, &layout) != SNOWMINT_RESULT_OK) return 1;
    printf("RESULT c_next_id_plain_capacity %.3f\n", best(bench_plain, 300000));
    printf("RESULT c_next_id_shared_capacity %.3f\n", best(bench_shared, 300000));
    snowmint_layout_free(layout);
    return 0;
}
