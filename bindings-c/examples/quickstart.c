/* Quickstart: mint, decode and print IDs with snowmint from C.
 * After `make -C bindings-c install PREFIX=...` (and, for a PREFIX outside the system's search paths,
 * PKG_CONFIG_PATH=PREFIX/lib/pkgconfig), from this file's directory:
 *   cc quickstart.c $(pkg-config --cflags --libs snowmint) -Wl,-rpath,"$(pkg-config --variable=libdir snowmint)" -o quickstart && ./quickstart
 * (tests/readme.sh runs this line as written.) */
#include <inttypes.h>
#include <stdio.h>

#include <snowmint.h>

static int check(snowmint_result r, const char *what) {
    if (r != SNOWMINT_RESULT_OK) {
        char msg[256];
        snowmint_last_error_message(msg, sizeof msg, NULL);
        fprintf(stderr, "%s: %s: %s\n", what, snowmint_result_name(r), msg);
        return 1;
    }
    return 0;
}

int main(void) {
    snowmint_layout *layout = NULL;        /* free with snowmint_layout_free */
    snowmint_shared_generator *gen = NULL; /* free with snowmint_shared_generator_free */
    int rc = 1;
    if (check(snowmint_layout_new_preset("twitter", &layout), "layout")) goto out;
    /* Node 7, default options (wait policy, system clock); thread-safe and lock-free. */
    if (check(snowmint_shared_generator_new(layout, 7, NULL, &gen), "generator")) goto out;

    uint64_t id;
    if (check(snowmint_shared_next_id(gen, &id), "next_id")) goto out;
    snowmint_decoded d;
    if (check(snowmint_decode(layout, id, &d), "decode")) goto out;
    char b58[SNOWMINT_ENCODED_CAPACITY];
    if (check(snowmint_encode(SNOWMINT_ENCODING_BASE58, id, b58, sizeof b58, NULL), "encode")) goto out;
    printf("%" PRIu64 " minted at %s by node %" PRIu64 " (base58 %s)\n", id, d.iso, d.node, b58);

    uint64_t batch[4];
    if (check(snowmint_shared_next_ids(gen, batch, 4), "next_ids")) goto out;
    for (int i = 0; i < 4; i++) printf("%" PRIu64 "\n", batch[i]);

    /* Errors carry a stable code and a message naming what was wrong. */
    snowmint_shared_generator *bad = NULL;
    snowmint_result r = snowmint_shared_generator_new(layout, 5000, NULL, &bad);
    char msg[256];
    snowmint_last_error_message(msg, sizeof msg, NULL);
    printf("node 5000: %s (%s)\n", snowmint_result_name(r), msg);
    rc = r == SNOWMINT_RESULT_NODE_ID_OUT_OF_RANGE ? 0 : 1;
out:
    snowmint_shared_generator_free(gen);
    snowmint_layout_free(layout);
    return rc;
}
