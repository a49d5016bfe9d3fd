/* One process of `make demo`'s fleet (scripts/demo_fleet.py), through the C API:
 *   worker SOURCE COUNT
 * claims a node ID from the lease source SOURCE (e.g. "file:///tmp/ids": the embedded store), prints
 * "node N", then mints COUNT IDs (twitter layout) in batches of 500, one decimal ID per line, flushed
 * after each batch, with a 10 ms pause between batches (so the fleet's processes mint at the same time);
 * freeing the generator releases the lease. A failing call prints its code on stderr and exits 1. */
#define _POSIX_C_SOURCE 200809L
#include <snowmint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define BATCH 500

static int fail(const char *what, snowmint_result r) {
    char message[512] = "";
    snowmint_last_error_message(message, sizeof message, NULL);
    fprintf(stderr, "%s: %s: %s\n", what, snowmint_result_name(r), message);
    return 1;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: worker SOURCE COUNT\n");
        return 2;
    }
    long count = strtol(argv[2], NULL, 10);
    snowmint_layout *twitter = NULL;
    snowmint_shared_generator *gen = NULL;
    uint64_t node = 0, ids[BATCH];
    snowmint_result r = snowmint_layout_new_from_preset(SNOWMINT_PRESET_TWITTER, &twitter);
    if (r != SNOWMINT_RESULT_OK) return fail("layout", r);
    r = snowmint_generator_open(argv[1], twitter, NULL, &gen);
    if (r != SNOWMINT_RESULT_OK) return fail("snowmint_generator_open", r);
    snowmint_shared_generator_node_id(gen, &node);
    printf("node %llu\n", (unsigned long long)node);
    fflush(stdout);
    struct timespec pause = {0, 10 * 1000 * 1000};
    for (long done = 0; done < count; done += BATCH) {
        size_t n = (size_t)(count - done < BATCH ? count - done : BATCH);
        r = snowmint_shared_next_ids(gen, ids, n);
        if (r != SNOWMINT_RESULT_OK) return fail("snowmint_shared_next_ids", r);
        for (size_t i = 0; i < n; i++) printf("%llu\n", (unsigned long long)ids[i]);
        fflush(stdout);
        nanosleep(&pause, NULL);
    }
    snowmint_shared_generator_free(gen);
    snowmint_layout_free(twitter);
    return 0;
}
