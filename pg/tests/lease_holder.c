/*
 * pg/test.sh's application process: leases a node ID from a node source (the sequencer the database
 * leases from), prints "node N", mints COUNT IDs (one per line), then holds the lease until its stdin
 * closes. An error: "error CODE: message" and exit status 1.
 *   lease_holder SOURCE [COUNT]
 */
#include <snowmint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    snowmint_layout *layout = NULL;
    snowmint_shared_generator *g = NULL;
    uint64_t node = 0, id;
    char msg[512];
    long count = argc > 2 ? atol(argv[2]) : 0;
    uint32_t r;
    if (argc < 2) {
        fprintf(stderr, "usage: lease_holder SOURCE [COUNT]\n");
        return 2;
    }
    snowmint_layout_new_preset("twitter", &layout);
    r = snowmint_generator_open(argv[1], layout, NULL, &g);
    if (r == SNOWMINT_RESULT_OK)
        r = snowmint_shared_generator_node_id(g, &node);
    if (r != SNOWMINT_RESULT_OK) {
        snowmint_last_error_message(msg, sizeof msg, NULL);
        printf("error %s: %s\n", snowmint_result_name(r), msg);
        return 1;
    }
    printf("node %llu\n", (unsigned long long) node);
    for (long i = 0; i < count; i++) {
        r = snowmint_shared_next_id(g, &id);
        if (r != SNOWMINT_RESULT_OK) {
            printf("error %s\n", snowmint_result_name(r));
            return 1;
        }
        printf("%llu\n", (unsigned long long) id);
    }
    fflush(stdout);
    while (getchar() != EOF) {
    }
    snowmint_shared_generator_free(g);
    snowmint_layout_free(layout);
    return 0;
}
