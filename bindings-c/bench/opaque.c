/* Speed of opaque IDs through the C API: snowmint_opaque_encode / _decode per call, and
 * snowmint_opaque_encode_many per ID. Prints "RESULT name ns" lines (fastest of 15 samples) for
 * bench.sh. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "snowmint.h"

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

#define CALLS 200000
#define BATCH 4096

int main(void) {
    static const uint8_t key[16] = "bench-opaque-key";
    snowmint_layout *layout = NULL;
    snowmint_opaque *o = NULL;
    if (snowmint_layout_new_preset("twitter", &layout) || snowmint_opaque_new(key, 16, layout, &o)) {
        fprintf(stderr, "cannot create the opaque handle\n");
        return 1;
    }
    const uint64_t base = 1541815603606036480ULL;
    static uint64_t buf[BATCH];
    double best_enc = 1e18, best_dec = 1e18, best_many = 1e18;
    volatile uint64_t sink = 0;
    for (int s = 0; s < 15; s++) {
        uint64_t acc = 0, t = 0;
        double t0 = now_ns();
        for (uint64_t i = 0; i < CALLS; i++) {
            if (snowmint_opaque_encode(o, base + i, &t)) return 1;
            acc ^= t;
        }
        double t1 = now_ns();
        for (uint64_t i = 0; i < CALLS; i++) {
            if (snowmint_opaque_decode(o, (base ^ (i & 0xffff)), &t)) return 1;
            acc ^= t;
        }
        double t2 = now_ns();
        for (int i = 0; i < BATCH; i++) buf[i] = base + (uint64_t)i;
        double t3 = now_ns();
        for (int r = 0; r < CALLS / BATCH; r++) {
            if (snowmint_opaque_encode_many(o, buf, BATCH) || snowmint_opaque_decode_many(o, buf, BATCH)) return 1;
        }
        double t4 = now_ns();
        sink ^= acc ^ buf[0];
        if ((t1 - t0) / CALLS < best_enc) best_enc = (t1 - t0) / CALLS;
        if ((t2 - t1) / CALLS < best_dec) best_dec = (t2 - t1) / CALLS;
        double per = (t4 - t3) / ((double)(CALLS / BATCH) * BATCH * 2);
        if (per < best_many) best_many = per;
    }
    printf("RESULT c_opaque_encode %.3f\nRESULT c_opaque_decode %.3f\nRESULT c_opaque_many_per_id %.3f\n", best_enc,
           best_dec, best_many);
    snowmint_opaque_free(o);
    snowmint_layout_free(layout);
    return (int)(sink & 0);
}
