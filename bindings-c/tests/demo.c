/*
 * demo CASE.json : prints, one per line, the decimal IDs minted through the C API for one case in the
 *                  tests/vectors/generate.json case format (scripted injected clock); a failing call
 *                  prints "error CODE" and the run moves on to the next step.
 * demo --live N  : N IDs from the system clock (layout twitter, node 7).
 */
#define SNOWMINT_VECTORS_NO_MAIN
#pragma GCC diagnostic ignored "-Wunused-function"
#include "vectors.c"

static int live(long n) {
    snowmint_layout *l = NULL;
    snowmint_shared_generator *g = NULL;
    snowmint_result r = snowmint_layout_new_preset("twitter", &l);
    if (r == SNOWMINT_RESULT_OK) r = snowmint_shared_generator_new(l, 7, NULL, &g);
    for (long i = 0; i < n && r == SNOWMINT_RESULT_OK; i++) {
        uint64_t id;
        r = snowmint_shared_next_id(g, &id);
        if (r == SNOWMINT_RESULT_OK) printf("%" PRIu64 "\n", id);
    }
    if (r != SNOWMINT_RESULT_OK) printf("error %s\n", snowmint_result_name(r));
    snowmint_shared_generator_free(g);
    snowmint_layout_free(l);
    return r == SNOWMINT_RESULT_OK ? 0 : 1;
}

static int replay(const cJSON *c) {
    snowmint_layout *l = NULL;
    snowmint_result r = SNOWMINT_RESULT_OK;
    if (make_layout(field(c, "layout"), &l, &r)) return -1;
    if (r != SNOWMINT_RESULT_OK) {
        printf("error %s\n", snowmint_result_name(r));
        return 0;
    }
    snowmint_options o;
    snowmint_options_default(&o);
    script_clock clock = {{0}, 1, 0};
    uint64_t node = 0, v = 0;
    const char *policy = NULL;
    if (get_u64(c, "node_id", &node)) return -1;
    if (field(c, "policy") && (get_str(c, "policy", &policy) || snowmint_policy_from_name(policy, &o.policy)))
        return fail("bad policy");
    if (field(c, "max_ahead_ms")) {
        if (get_u64(c, "max_ahead_ms", &v)) return -1;
        o.max_ahead_ns = v * 1000000;
    }
    if (field(c, "random_seed")) {
        if (get_u64(c, "random_seed", &o.seed)) return -1;
        o.sequence_start = SNOWMINT_SEQUENCE_START_SEEDED;
    }
    o.clock = script_read;
    o.clock_userdata = &clock;
    snowmint_shared_generator *g = NULL;
    r = snowmint_shared_generator_new(l, node, &o, &g);
    if (r != SNOWMINT_RESULT_OK) {
        printf("error %s\n", snowmint_result_name(r));
        snowmint_layout_free(l);
        return 0;
    }
    const cJSON *steps = field(c, "steps");
    for (const cJSON *s = steps ? steps->child : NULL; s; s = s->next) {
        const cJSON *readings = field(s, "clock");
        const char *op = NULL;
        uint64_t count = 0;
        clock.n = 0;
        clock.i = 0;
        for (const cJSON *x = readings ? readings->child : NULL; x && clock.n < 64; x = x->next) {
            if (as_u64(x, "clock reading", &clock.readings[clock.n++])) return -1;
        }
        if (clock.n == 0 || get_str(s, "op", &op) || get_u64(s, "count", &count)) return fail("bad step");
        if (strcmp(op, "batch") == 0) {
            uint64_t *buf = calloc((size_t)count + 1, sizeof *buf);
            if (!buf) return fail("out of memory");
            r = snowmint_shared_next_ids(g, buf, (size_t)count);
            if (r == SNOWMINT_RESULT_OK) {
                for (uint64_t i = 0; i < count; i++) printf("%" PRIu64 "\n", buf[i]);
            } else {
                printf("error %s\n", snowmint_result_name(r));
            }
            free(buf);
        } else {
            for (uint64_t i = 0; i < count; i++) {
                uint64_t id;
                r = snowmint_shared_next_id(g, &id);
                if (r != SNOWMINT_RESULT_OK) {
                    printf("error %s\n", snowmint_result_name(r));
                    break;
                }
                printf("%" PRIu64 "\n", id);
            }
        }
    }
    snowmint_shared_generator_free(g);
    snowmint_layout_free(l);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--live") == 0) return live(atol(argv[2]));
    if (argc != 2) {
        fprintf(stderr, "usage: %s CASE.json | --live N\n", argv[0]);
        return 2;
    }
    char *text = read_file(argv[1]);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    if (!root) {
        fprintf(stderr, "cannot read or parse %s\n", argv[1]);
        return 2;
    }
    const cJSON *c = root;
    const cJSON *cases = field(root, "cases");
    if (cJSON_IsArray(cases) && cJSON_GetArraySize(cases) == 1) c = cases->child;
    int rc = replay(c);
    if (rc) fprintf(stderr, "demo: %s\n", fail_text);
    cJSON_Delete(root);
    free(text);
    return rc ? 1 : 0;
}
