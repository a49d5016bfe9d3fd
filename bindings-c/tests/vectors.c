/*
 * Conformance runner: runs EVERY case of EVERY tests/vectors/ JSON file through the public C API.
 *
 * Usage: vectors DIR   (DIR = tests/vectors). Rejects unknown fields, duplicate case names and files
 * without cases; fails on any unknown file or case. Prints "N passed, M failed" and exits non-zero on
 * any failure. JSON is read at run time with cJSON (Debian libcjson-dev). Built with SNOWMINT_ID_ONLY
 * (against libsnowmint-core) it skips node_sources.json, the coordination library's, and says so.
 */
#define _POSIX_C_SOURCE 200809L
/* 64-bit inode numbers from readdir on 32-bit CPUs too (armv7 reading a file system with large inodes
 * gets EOVERFLOW, i.e. an empty directory, without it). */
#define _FILE_OFFSET_BITS 64
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "snowmint.h"

static const char *cur_file = "";
static const char *cur_case = "";
static char fail_text[2048];
static int case_failed;

/* Records the first failure of the current case; always returns -1. */
static int fail(const char *fmt, ...) {
    if (!case_failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(fail_text, sizeof fail_text, fmt, ap);
        va_end(ap);
        case_failed = 1;
    }
    return -1;
}

static const char *last_message(void) {
    static char buf[1024];
    size_t len = 0;
    if (snowmint_last_error_message(buf, sizeof buf, &len) != SNOWMINT_RESULT_OK) {
        snprintf(buf, sizeof buf, "(message unavailable)");
    }
    return buf;
}

/* ---- JSON helpers ---- */

static int check_keys(const cJSON *obj, const char *what, const char *const *allowed) {
    if (!cJSON_IsObject(obj)) return fail("%s is not an object", what);
    for (const cJSON *c = obj->child; c; c = c->next) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++) {
            if (strcmp(c->string, *a) == 0) ok = 1;
        }
        if (!ok) return fail("unknown field \"%s\" in %s", c->string, what);
        for (const cJSON *d = c->next; d; d = d->next) {
            if (strcmp(c->string, d->string) == 0) return fail("duplicate field \"%s\" in %s", c->string, what);
        }
    }
    return 0;
}

static const cJSON *field(const cJSON *obj, const char *name) {
    return cJSON_GetObjectItemCaseSensitive(obj, name);
}

/* A u64 given as a decimal string (or, for small values, a JSON number). */
static int as_u64(const cJSON *item, const char *what, uint64_t *out) {
    if (cJSON_IsString(item)) {
        const char *s = item->valuestring;
        if (!*s) return fail("%s: empty number string", what);
        uint64_t v = 0;
        for (const char *p = s; *p; p++) {
            if (*p < '0' || *p > '9') return fail("%s: not a decimal string: \"%s\"", what, s);
            unsigned d = (unsigned)(*p - '0');
            if (v > (UINT64_MAX - d) / 10) return fail("%s: out of u64 range: %s", what, s);
            v = v * 10 + d;
        }
        *out = v;
        return 0;
    }
    if (cJSON_IsNumber(item)) {
        double d = item->valuedouble;
        if (!(d >= 0 && d <= 9007199254740991.0) || d != floor(d)) return fail("%s: not a whole number", what);
        *out = (uint64_t)d;
        return 0;
    }
    return fail("%s: missing or not a number", what);
}

static int get_u64(const cJSON *obj, const char *name, uint64_t *out) {
    const cJSON *item = field(obj, name);
    if (!item) return fail("missing field \"%s\"", name);
    return as_u64(item, name, out);
}

static int get_str(const cJSON *obj, const char *name, const char **out) {
    const cJSON *item = field(obj, name);
    if (!cJSON_IsString(item)) return fail("field \"%s\" missing or not a string", name);
    *out = item->valuestring;
    return 0;
}

static const char *result_name(snowmint_result r) { return snowmint_result_name(r); }

/* Expects `got` to be the error named by `expected`. */
static int expect_error(snowmint_result got, const char *expected, const char *op) {
    if (got == SNOWMINT_RESULT_OK) return fail("%s: expected error %s, got OK", op, expected);
    if (strcmp(result_name(got), expected) != 0) {
        return fail("%s: expected error %s, got %s (%s)", op, expected, result_name(got), last_message());
    }
    return 0;
}

static int expect_ok(snowmint_result got, const char *op) {
    if (got != SNOWMINT_RESULT_OK) return fail("%s: unexpected error %s: %s", op, result_name(got), last_message());
    return 0;
}

static int expect_eq(uint64_t got, uint64_t want, const char *what) {
    if (got != want) return fail("%s: expected %" PRIu64 ", got %" PRIu64, what, want, got);
    return 0;
}

/* ---- layouts ---- */

static const char *const LAYOUT_KEYS[] = {"preset", "node_id_offset", "epoch_ms", "node_count", "timestamp_bits",
                                          "node_bits", "sequence_bits", "order", "tick_ns", "use_sign_bit", NULL};

/* Builds a layout from a layout spec. Returns the library's result (the spec's own errors are failures). */
static int make_layout(const cJSON *spec, snowmint_layout **out, snowmint_result *res) {
    if (check_keys(spec, "layout", LAYOUT_KEYS)) return -1;
    const cJSON *preset = field(spec, "preset");
    if (preset) {
        if (!cJSON_IsString(preset)) return fail("layout.preset is not a string");
        const char *name = preset->valuestring;
        if (strcmp(name, "snowcast") == 0) {
            static const char *const K[] = {"preset", "epoch_ms", "node_count", NULL};
            uint64_t epoch = 0, count = 0;
            if (check_keys(spec, "snowcast layout", K) || get_u64(spec, "epoch_ms", &epoch) ||
                get_u64(spec, "node_count", &count))
                return -1;
            *res = snowmint_layout_new_snowcast(epoch, count, out);
        } else if (field(spec, "node_id_offset")) {
            static const char *const K[] = {"preset", "node_id_offset", NULL};
            uint64_t off = 0;
            if (check_keys(spec, "hazelcast layout", K) || get_u64(spec, "node_id_offset", &off)) return -1;
            if (strcmp(name, "hazelcast") != 0) return fail("node_id_offset given for preset %s", name);
            *res = snowmint_layout_new_hazelcast(off, out);
        } else {
            static const char *const K[] = {"preset", NULL};
            if (check_keys(spec, "preset layout", K)) return -1;
            *res = snowmint_layout_new_preset(name, out);
        }
        return 0;
    }
    snowmint_layout_config cfg;
    if (expect_ok(snowmint_layout_config_default(&cfg), "layout_config_default")) return -1;
    uint64_t v = 0;
    const char *order = NULL;
    if (get_u64(spec, "timestamp_bits", &v)) return -1;
    cfg.timestamp_bits = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    if (get_u64(spec, "node_bits", &v)) return -1;
    cfg.node_bits = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    if (get_u64(spec, "sequence_bits", &v)) return -1;
    cfg.sequence_bits = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    if (get_u64(spec, "tick_ns", &cfg.tick_ns) || get_u64(spec, "epoch_ms", &cfg.epoch_ms) ||
        get_str(spec, "order", &order))
        return -1;
    uint32_t order_n = 0;
    snowmint_result r = snowmint_order_from_name(order, &order_n);
    if (r != SNOWMINT_RESULT_OK) {
        *res = r;
        return 0;
    }
    cfg.order = order_n;
    cfg.node_id_offset = 0;
    if (field(spec, "node_id_offset") && get_u64(spec, "node_id_offset", &cfg.node_id_offset)) return -1;
    cfg.use_sign_bit = false;
    const cJSON *sign = field(spec, "use_sign_bit");
    if (sign) {
        if (!cJSON_IsBool(sign)) return fail("use_sign_bit is not a boolean");
        cfg.use_sign_bit = cJSON_IsTrue(sign);
    }
    cfg.node_split_bits = 0;
    *res = snowmint_layout_new(&cfg, out);
    return 0;
}

/* A layout that must build. */
static int need_layout(const cJSON *c, snowmint_layout **out) {
    snowmint_result r = SNOWMINT_RESULT_OK;
    if (make_layout(field(c, "layout"), out, &r)) return -1;
    return expect_ok(r, "layout");
}

/* ---- layouts.json ---- */

static int run_layout_case(const cJSON *c) {
    static const char *const K[] = {"name", "layout", "expect", "error", "field", NULL};
    if (check_keys(c, "case", K)) return -1;
    snowmint_layout *l = NULL;
    snowmint_result r = SNOWMINT_RESULT_OK;
    if (make_layout(field(c, "layout"), &l, &r)) return -1;
    const cJSON *err = field(c, "error");
    int rc = 0;
    if (err) {
        const char *want_field = NULL;
        if (!cJSON_IsString(err) || field(c, "expect")) rc = fail("bad error case");
        else if (field(c, "field") && get_str(c, "field", &want_field)) rc = -1;
        else if (expect_error(r, err->valuestring, "layout")) rc = -1;
        else if (l) rc = fail("layout handle written on error");
        else if (want_field && !strstr(last_message(), want_field))
            rc = fail("message \"%s\" does not name %s", last_message(), want_field);
        snowmint_layout_free(l);
        return rc;
    }
    if (field(c, "field")) return fail("field without error");
    if (expect_ok(r, "layout")) return -1;
    const cJSON *e = field(c, "expect");
    static const char *const EK[] = {"total_bits", "node_count", "ids_per_tick", "max_node_id", "max_tick",
                                     "lifespan_end_ms", "lifespan_end_iso", "clock_unit", NULL};
    snowmint_layout_info info;
    if (check_keys(e, "expect", EK) || expect_ok(snowmint_layout_get_info(l, &info), "layout_get_info")) {
        snowmint_layout_free(l);
        return -1;
    }
    struct {
        const char *k;
        uint64_t got;
    } nums[] = {{"total_bits", info.total_bits},     {"node_count", info.node_count},
                {"ids_per_tick", info.ids_per_tick}, {"max_node_id", info.max_node_id},
                {"max_tick", info.max_tick},         {"lifespan_end_ms", info.lifespan_end_ms}};
    for (size_t i = 0; i < sizeof nums / sizeof nums[0] && !rc; i++) {
        uint64_t want = 0;
        if (!field(e, nums[i].k)) continue;
        rc = get_u64(e, nums[i].k, &want) || expect_eq(nums[i].got, want, nums[i].k) ? -1 : 0;
    }
    const char *s = NULL;
    if (!rc && field(e, "lifespan_end_iso")) {
        if (get_str(e, "lifespan_end_iso", &s)) rc = -1;
        else if (strcmp(s, info.lifespan_end_iso) != 0)
            rc = fail("lifespan_end_iso: expected %s, got %s", s, info.lifespan_end_iso);
    }
    if (!rc && field(e, "clock_unit")) {
        const char *got = info.clock_unit == SNOWMINT_CLOCK_UNIT_NS ? "ns" : "ms";
        if (get_str(e, "clock_unit", &s)) rc = -1;
        else if (strcmp(s, got) != 0) rc = fail("clock_unit: expected %s, got %s", s, got);
    }
    snowmint_layout_free(l);
    return rc;
}

/* ---- generate.json ---- */

typedef struct {
    uint64_t readings[64];
    size_t n;
    size_t i;
} script_clock;

static uint64_t script_read(void *userdata) {
    script_clock *c = userdata;
    size_t at = c->i < c->n ? c->i : c->n - 1;
    if (c->i < c->n) c->i++;
    return c->readings[at];
}

typedef struct {
    snowmint_generator *plain;
    snowmint_shared_generator *shared;
} any_gen;

static snowmint_result gen_next(any_gen g, uint64_t *id) {
    return g.plain ? snowmint_next_id(g.plain, id) : snowmint_shared_next_id(g.shared, id);
}

static snowmint_result gen_batch(any_gen g, uint64_t *buf, size_t n) {
    return g.plain ? snowmint_next_ids(g.plain, buf, n) : snowmint_shared_next_ids(g.shared, buf, n);
}

static int run_step(const cJSON *step, any_gen g, script_clock *clock) {
    const char *op = NULL;
    if (get_str(step, "op", &op)) return -1;
    if (strcmp(op, "state") == 0 || strcmp(op, "restore") == 0) {
        /* The high-water mark: check it, or restore one (never moves backwards). */
        static const char *const KS[] = {"op", "state", NULL};
        uint64_t want = 0, got = 42;
        if (check_keys(step, "step", KS) || get_u64(step, "state", &want)) return -1;
        if (op[0] == 'r') {
            return expect_ok(g.plain ? snowmint_generator_restore(g.plain, want)
                                     : snowmint_shared_generator_restore(g.shared, want),
                             "restore");
        }
        if (expect_ok(g.plain ? snowmint_generator_state(g.plain, &got)
                              : snowmint_shared_generator_state(g.shared, &got),
                      "state"))
            return -1;
        return expect_eq(got, want, "state");
    }
    static const char *const K[] = {"clock", "op", "count", "ids", "first", "last", "error", NULL};
    if (check_keys(step, "step", K)) return -1;
    const cJSON *readings = field(step, "clock");
    if (!cJSON_IsArray(readings) || cJSON_GetArraySize(readings) < 1 || cJSON_GetArraySize(readings) > 64)
        return fail("step.clock must be an array of 1..64 readings");
    clock->n = 0;
    clock->i = 0;
    for (const cJSON *r = readings->child; r; r = r->next) {
        if (as_u64(r, "clock reading", &clock->readings[clock->n++])) return -1;
    }
    uint64_t count = 0;
    if (get_u64(step, "count", &count)) return -1;
    if (count < 1 || count > 10000000) return fail("step.count out of range");
    int batch = strcmp(op, "batch") == 0;
    if (!batch && strcmp(op, "next") != 0) return fail("unknown op %s", op);
    const cJSON *ids = field(step, "ids"), *first = field(step, "first"), *last = field(step, "last"),
                *err = field(step, "error");
    if ((ids != NULL) + (first != NULL || last != NULL) + (err != NULL) != 1 || (first != NULL) != (last != NULL))
        return fail("a step needs exactly one of ids, first+last, error");
    uint64_t *got = calloc((size_t)count, sizeof *got);
    if (!got) return fail("out of memory");
    int rc = 0;
    if (err) {
        if (!cJSON_IsString(err)) rc = fail("step.error is not a string");
        else if (batch) {
            got[0] = 0x5a5a5a5a5a5a5a5aULL;
            rc = expect_error(gen_batch(g, got, (size_t)count), err->valuestring, "batch");
            if (!rc && got[0] != 0x5a5a5a5a5a5a5a5aULL) rc = fail("batch buffer written on error");
        } else {
            uint64_t id = 42;
            rc = expect_error(gen_next(g, &id), err->valuestring, "next");
            if (!rc && id != 42) rc = fail("id_out written on error");
        }
        free(got);
        return rc;
    }
    if (batch) {
        rc = expect_ok(gen_batch(g, got, (size_t)count), "batch");
    } else {
        for (uint64_t i = 0; i < count && !rc; i++) rc = expect_ok(gen_next(g, &got[i]), "next");
    }
    if (!rc && ids) {
        if (!cJSON_IsArray(ids) || (uint64_t)cJSON_GetArraySize(ids) != count) rc = fail("ids has not count entries");
        uint64_t i = 0;
        for (const cJSON *x = ids->child; x && !rc; x = x->next, i++) {
            uint64_t want = 0;
            char what[64];
            snprintf(what, sizeof what, "id #%" PRIu64, i);
            rc = as_u64(x, "id", &want) || expect_eq(got[i], want, what) ? -1 : 0;
        }
    } else if (!rc) {
        uint64_t a = 0, b = 0;
        rc = as_u64(first, "first", &a) || as_u64(last, "last", &b) || expect_eq(got[0], a, "first") ||
                     expect_eq(got[count - 1], b, "last")
                 ? -1
                 : 0;
        for (uint64_t i = 1; i < count && !rc; i++) {
            if (got[i] <= got[i - 1]) rc = fail("IDs do not strictly increase at #%" PRIu64, i);
        }
    }
    free(got);
    return rc;
}

static int run_generate_case(const cJSON *c, int shared) {
    static const char *const K[] = {"name",         "layout",      "node_id", "policy", "max_ahead_ms",
                                    "random_seed", "steps", "error",   NULL};
    if (check_keys(c, "case", K)) return -1;
    snowmint_layout *l = NULL;
    snowmint_result r = SNOWMINT_RESULT_OK;
    const cJSON *err = field(c, "error"), *steps = field(c, "steps");
    if (make_layout(field(c, "layout"), &l, &r)) return -1;
    if (r != SNOWMINT_RESULT_OK) {
        if (!err || !cJSON_IsString(err)) return fail("layout failed: %s", result_name(r));
        if (steps) return fail("error case with steps");
        return expect_error(r, err->valuestring, "layout");
    }
    snowmint_options o;
    script_clock clock = {{0}, 1, 0};
    uint64_t node = 0, v = 0;
    int rc = 0;
    any_gen g = {NULL, NULL};
    if (expect_ok(snowmint_options_default(&o), "options_default") || get_u64(c, "node_id", &node)) goto done;
    const char *policy = NULL;
    if (field(c, "policy")) {
        if (get_str(c, "policy", &policy)) goto done;
        r = snowmint_policy_from_name(policy, &o.policy);
        if (r != SNOWMINT_RESULT_OK) {
            rc = fail("policy %s: %s", policy, result_name(r));
            goto done;
        }
    }
    if (field(c, "max_ahead_ms")) {
        if (get_u64(c, "max_ahead_ms", &v)) goto done;
        if (v > UINT64_MAX / 1000000) {
            rc = fail("max_ahead_ms too large");
            goto done;
        }
        o.max_ahead_ns = v * 1000000;
    }
    if (field(c, "random_seed")) {
        if (get_u64(c, "random_seed", &o.seed)) goto done;
        o.sequence_start = SNOWMINT_SEQUENCE_START_SEEDED;
    }
    o.clock = script_read;
    o.clock_userdata = &clock;
    r = shared ? snowmint_shared_generator_new(l, node, &o, &g.shared) : snowmint_generator_new(l, node, &o, &g.plain);
    if (err) {
        if (!cJSON_IsString(err) || steps) rc = fail("bad error case");
        else rc = expect_error(r, err->valuestring, "generator_new");
        if (!rc && (g.plain || g.shared)) rc = fail("generator handle written on error");
        goto done;
    }
    if (expect_ok(r, "generator_new")) goto done;
    if (!cJSON_IsArray(steps) || cJSON_GetArraySize(steps) < 1) {
        rc = fail("case without steps");
        goto done;
    }
    for (const cJSON *s = steps->child; s && !rc; s = s->next) rc = run_step(s, g, &clock);
done:
    snowmint_generator_free(g.plain);
    snowmint_shared_generator_free(g.shared);
    snowmint_layout_free(l);
    return case_failed ? -1 : rc;
}

/* ---- clock_readings.json ---- */

typedef struct {
    double reading;
} float_clock;

static double float_read(void *userdata) { return ((float_clock *)userdata)->reading; }

static int run_clock_case(const cJSON *c) {
    static const char *const K[] = {"name", "layout", "reading", "error", "ns", NULL};
    if (check_keys(c, "case", K)) return -1;
    const cJSON *reading = field(c, "reading"), *err = field(c, "error");
    float_clock fc;
    if (cJSON_IsNumber(reading)) fc.reading = reading->valuedouble;
    else if (cJSON_IsString(reading) && strcmp(reading->valuestring, "NaN") == 0) fc.reading = NAN;
    else if (cJSON_IsString(reading) && strcmp(reading->valuestring, "Infinity") == 0) fc.reading = INFINITY;
    else if (cJSON_IsString(reading) && strcmp(reading->valuestring, "-Infinity") == 0) fc.reading = -INFINITY;
    else return fail("reading must be a number, \"NaN\", \"Infinity\" or \"-Infinity\"");
    if ((err != NULL) == (field(c, "ns") != NULL)) return fail("a case needs exactly one of error, ns");
    snowmint_layout *l = NULL;
    if (need_layout(c, &l)) return -1;
    uint64_t ns = 7, want = 0;
    int rc = 0;
    snowmint_result r = snowmint_clock_reading_to_ns(l, fc.reading, &ns);
    if (err) {
        rc = !cJSON_IsString(err) ? fail("error is not a string") : expect_error(r, err->valuestring, "clock_reading_to_ns");
        if (!rc && ns != 7) rc = fail("ns_out written on error");
    } else {
        rc = get_u64(c, "ns", &want) || expect_ok(r, "clock_reading_to_ns") || expect_eq(ns, want, "ns") ? -1 : 0;
    }
    /* The same reading through a generator's floating-point clock, plain and shared. */
    snowmint_options o;
    snowmint_options_default(&o);
    o.clock_f64 = float_read;
    o.clock_userdata = &fc;
    for (int shared = 0; shared < 2 && !rc; shared++) {
        any_gen g = {NULL, NULL};
        uint64_t id = 0;
        r = shared ? snowmint_shared_generator_new(l, 0, &o, &g.shared) : snowmint_generator_new(l, 0, &o, &g.plain);
        if (!expect_ok(r, "generator_new")) {
            r = gen_next(g, &id);
            if (err) rc = expect_error(r, err->valuestring, "next_id with clock_f64");
            else if (r == SNOWMINT_RESULT_INVALID_CLOCK) rc = fail("a valid reading gave INVALID_CLOCK");
        } else {
            rc = -1;
        }
        snowmint_generator_free(g.plain);
        snowmint_shared_generator_free(g.shared);
    }
    snowmint_layout_free(l);
    return rc;
}

/* ---- decode.json ---- */

static int run_decode_case(const cJSON *c) {
    static const char *const K[] = {"name", "layout", "id", "expect", "error", NULL};
    if (check_keys(c, "case", K)) return -1;
    snowmint_layout *l = NULL;
    uint64_t id = 0;
    if (get_u64(c, "id", &id) || need_layout(c, &l)) return -1;
    snowmint_decoded d;
    memset(&d, 0x5a, sizeof d);
    snowmint_result r = snowmint_decode(l, id, &d);
    const cJSON *err = field(c, "error"), *e = field(c, "expect");
    int rc = 0;
    if ((err != NULL) == (e != NULL)) rc = fail("a case needs exactly one of expect, error");
    else if (err) {
        rc = !cJSON_IsString(err) ? fail("error is not a string") : expect_error(r, err->valuestring, "decode");
        if (!rc && d.id != 0x5a5a5a5a5a5a5a5aULL) rc = fail("decoded_out written on error");
    } else {
        static const char *const EK[] = {"timestamp_ticks", "unix_ms", "sub_ms_ns", "node", "sequence", "iso", NULL};
        rc = check_keys(e, "expect", EK) || expect_ok(r, "decode") ? -1 : 0;
        struct {
            const char *k;
            uint64_t got;
        } nums[] = {{"timestamp_ticks", d.timestamp_ticks}, {"unix_ms", d.unix_ms}, {"sub_ms_ns", d.sub_ms_ns},
                    {"node", d.node},                       {"sequence", d.sequence}};
        for (size_t i = 0; i < sizeof nums / sizeof nums[0] && !rc; i++) {
            uint64_t want = 0;
            if (!field(e, nums[i].k)) continue;
            rc = get_u64(e, nums[i].k, &want) || expect_eq(nums[i].got, want, nums[i].k) ? -1 : 0;
        }
        const char *iso = NULL;
        if (!rc && field(e, "iso")) {
            if (get_str(e, "iso", &iso)) rc = -1;
            else if (strcmp(iso, d.iso) != 0) rc = fail("iso: expected %s, got %s", iso, d.iso);
        }
        if (!rc) rc = expect_eq(d.id, id, "id");
    }
    snowmint_layout_free(l);
    return rc;
}

/* ---- compose.json ---- */

static int run_compose_case(const cJSON *c) {
    static const char *const K[] = {"name", "layout", "op", "timestamp_ticks", "node", "sequence", "unix_ms",
                                    "id",   "error",  NULL};
    if (check_keys(c, "case", K)) return -1;
    const char *op = NULL;
    snowmint_layout *l = NULL;
    if (get_str(c, "op", &op)) return -1;
    const cJSON *err = field(c, "error");
    if ((err != NULL) == (field(c, "id") != NULL)) return fail("a case needs exactly one of id, error");
    uint64_t got = 42, want = 0, a = 0, b = 0, s = 0;
    snowmint_result r;
    if (strcmp(op, "compose") == 0) {
        if (field(c, "unix_ms")) return fail("unix_ms in a compose case");
        if (get_u64(c, "timestamp_ticks", &a) || get_u64(c, "node", &b) || get_u64(c, "sequence", &s)) return -1;
        if (need_layout(c, &l)) return -1;
        r = snowmint_compose(l, a, b, s, &got);
    } else if (strcmp(op, "min_id_at") == 0) {
        if (field(c, "timestamp_ticks") || field(c, "node") || field(c, "sequence"))
            return fail("compose fields in a min_id_at case");
        if (get_u64(c, "unix_ms", &a)) return -1;
        if (need_layout(c, &l)) return -1;
        r = snowmint_min_id_at_ms(l, a, &got);
    } else {
        return fail("unknown op %s", op);
    }
    int rc;
    if (err) {
        rc = !cJSON_IsString(err) ? fail("error is not a string") : expect_error(r, err->valuestring, op);
        if (!rc && got != 42) rc = fail("id_out written on error");
    } else {
        rc = get_u64(c, "id", &want) || expect_ok(r, op) || expect_eq(got, want, "id") ? -1 : 0;
    }
    if (!rc && !err && strcmp(op, "compose") == 0) {
        /* Round trip through decode. */
        snowmint_decoded d;
        rc = expect_ok(snowmint_decode(l, got, &d), "decode") || expect_eq(d.timestamp_ticks, a, "ticks") ||
                     expect_eq(d.node, b, "node") || expect_eq(d.sequence, s, "sequence")
                 ? -1
                 : 0;
    }
    snowmint_layout_free(l);
    return rc;
}

/* ---- node_sources.json (the coordination library's; not in the ID-only build) ---- */

#ifndef SNOWMINT_ID_ONLY

#define MAX_ENV 8

/* Sets (string) or unsets (null) each variable of the case's "env"; `saved` gets the previous values
 * (strdup'ed, NULL when unset) for restore_env. */
static int set_env(const cJSON *env, const char **names, char **saved, int *n) {
    *n = 0;
    if (!env) return 0;
    if (!cJSON_IsObject(env)) return fail("env is not an object");
    for (const cJSON *v = env->child; v; v = v->next) {
        if (*n == MAX_ENV) return fail("more than %d variables in env", MAX_ENV);
        if (!cJSON_IsString(v) && !cJSON_IsNull(v)) return fail("env %s: expected a string or null", v->string);
        const char *old = getenv(v->string);
        names[*n] = v->string;
        saved[*n] = old ? strdup(old) : NULL;
        (*n)++;
        if (cJSON_IsString(v) ? setenv(v->string, v->valuestring, 1) : unsetenv(v->string))
            return fail("cannot set %s: %s", v->string, strerror(errno));
    }
    return 0;
}

static void restore_env(const char **names, char **saved, int n) {
    for (int i = n - 1; i >= 0; i--) {
        if (saved[i]) setenv(names[i], saved[i], 1);
        else unsetenv(names[i]);
        free(saved[i]);
    }
}

static int run_node_source_case(const cJSON *c) {
    static const char *const K[] = {"name", "layout", "source", "env", "node_id", "error", NULL};
    if (check_keys(c, "case", K)) return -1;
    const char *source = NULL;
    if (get_str(c, "source", &source)) return -1;
    const cJSON *err = field(c, "error");
    if ((err != NULL) == (field(c, "node_id") != NULL)) return fail("a case needs exactly one of node_id, error");
    if (err && !cJSON_IsString(err)) return fail("error is not a string");
    uint64_t want = 0, got = 0;
    if (!err && get_u64(c, "node_id", &want)) return -1;
    snowmint_layout *l = NULL;
    if (need_layout(c, &l)) return -1;
    const char *names[MAX_ENV];
    char *saved[MAX_ENV];
    int n = 0;
    int rc = set_env(field(c, "env"), names, saved, &n);
    snowmint_shared_generator *g = NULL;
    snowmint_result r = SNOWMINT_RESULT_OK;
    if (!rc) r = snowmint_generator_open(source, l, NULL, &g);
    restore_env(names, saved, n);
    if (!rc && err) {
        rc = expect_error(r, err->valuestring, "snowmint_generator_open");
        if (!rc && g) rc = fail("generator_out written on error");
    } else if (!rc) {
        rc = expect_ok(r, "snowmint_generator_open") ||
                     expect_ok(snowmint_shared_generator_node_id(g, &got), "node_id") ||
                     expect_eq(got, want, "node_id")
                 ? -1
                 : 0;
    }
    snowmint_shared_generator_free(g);
    snowmint_layout_free(l);
    return rc;
}
#endif /* SNOWMINT_ID_ONLY */

/* ---- encodings.json ---- */

static int run_encoding_case(const cJSON *c) {
    const char *op = NULL;
    if (get_str(c, "op", &op)) return -1;
    if (strcmp(op, "encode") == 0) {
        static const char *const K[] = {"name", "op", "id", "dec", "hex", "base32", "base58", NULL};
        uint64_t id = 0;
        if (check_keys(c, "case", K) || get_u64(c, "id", &id)) return -1;
        static const char *const FORMS[] = {"dec", "hex", "base32", "base58"};
        for (int i = 0; i < 4; i++) {
            const char *want = NULL;
            uint32_t enc = 0;
            char buf[SNOWMINT_ENCODED_CAPACITY];
            size_t len = 0;
            uint64_t back = 0;
            if (get_str(c, FORMS[i], &want) || expect_ok(snowmint_encoding_from_name(FORMS[i], &enc), FORMS[i]) ||
                expect_ok(snowmint_encode(enc, id, buf, sizeof buf, &len), "encode"))
                return -1;
            if (strcmp(buf, want) != 0 || len != strlen(want))
                return fail("encode %s: expected %s, got %s", FORMS[i], want, buf);
            if (expect_ok(snowmint_parse(enc, want, &back), "parse") || expect_eq(back, id, "parse back")) return -1;
        }
        return 0;
    }
    if (strcmp(op, "parse") != 0) return fail("unknown op %s", op);
    static const char *const K[] = {"name", "op", "encoding", "input", "id", "error", "position", "readings", NULL};
    const char *encoding = NULL, *input = NULL;
    if (check_keys(c, "case", K) || get_str(c, "encoding", &encoding) || get_str(c, "input", &input)) return -1;
    const cJSON *err = field(c, "error");
    if ((err != NULL) == (field(c, "id") != NULL)) return fail("a case needs exactly one of id, error");
    uint64_t got = 42, want = 0;
    snowmint_result r;
    if (strcmp(encoding, "any") == 0) {
        r = snowmint_parse_any(input, &got);
    } else {
        uint32_t enc = 0;
        if (expect_ok(snowmint_encoding_from_name(encoding, &enc), "encoding_from_name")) return -1;
        r = snowmint_parse(enc, input, &got);
    }
    if (!err) {
        if (field(c, "position")) return fail("position without error");
        return get_u64(c, "id", &want) || expect_ok(r, "parse") || expect_eq(got, want, "id") ? -1 : 0;
    }
    if (!cJSON_IsString(err) || expect_error(r, err->valuestring, "parse")) return -1;
    if (got != 42) return fail("id_out written on error");
    if (field(c, "position")) {
        snowmint_error_info info;
        uint64_t pos = 0;
        if (get_u64(c, "position", &pos) || expect_ok(snowmint_last_error_info(&info), "last_error_info") ||
            expect_eq(info.position, pos, "position"))
            return -1;
    }
    const cJSON *readings = field(c, "readings");
    if (readings) {
        /* Ambiguous: the message names every reading ("FORM VALUE"); nothing was chosen. */
        char msg[512], want_text[96];
        if (!cJSON_IsObject(readings)) return fail("readings must be an object");
        if (expect_ok(snowmint_last_error_message(msg, sizeof msg, NULL), "last_error_message")) return -1;
        for (const cJSON *r = readings->child; r; r = r->next) {
            if (!cJSON_IsString(r)) return fail("a reading must be a string");
            snprintf(want_text, sizeof want_text, "%s %s", r->string, r->valuestring);
            if (!strstr(msg, want_text)) return fail("message \"%s\" does not name %s", msg, want_text);
        }
    }
    return 0;
}

/* ---- opaque.json ---- */

static int hex_key(const char *hex, uint8_t *key, size_t cap, size_t *len) {
    size_t n = strlen(hex);
    if (n % 2 || n / 2 > cap) return fail("key: odd length or longer than %zu bytes", cap);
    for (size_t i = 0; i < n / 2; i++) {
        unsigned byte = 0;
        if (sscanf(hex + 2 * i, "%2x", &byte) != 1) return fail("key: not hex");
        key[i] = (uint8_t)byte;
    }
    *len = n / 2;
    return 0;
}

static int run_opaque_case(const cJSON *c) {
    static const char *const K[] = {"name", "layout", "key", "bits", "error", "op", "input", "ids", "tokens", NULL};
    if (check_keys(c, "case", K)) return -1;
    const char *hex = NULL;
    uint8_t key[64] = {0};
    size_t key_len = 0;
    snowmint_layout *l = NULL;
    if (get_str(c, "key", &hex) || hex_key(hex, key, sizeof key, &key_len) || need_layout(c, &l)) return -1;
    snowmint_opaque *o = (snowmint_opaque *)0x1;
    snowmint_result r = snowmint_opaque_new(key, key_len, l, &o);
    snowmint_layout_free(l);
    const cJSON *err = field(c, "error");
    uint64_t bits = 0;
    if (!field(c, "bits")) {
        if (!cJSON_IsString(err)) return fail("a case without bits needs an error");
        if (expect_error(r, err->valuestring, "opaque_new")) return -1;
        return o == (snowmint_opaque *)0x1 ? 0 : fail("opaque_out written on error");
    }
    if (expect_ok(r, "opaque_new")) return -1;
    int rc = get_u64(c, "bits", &bits) || expect_eq(snowmint_opaque_bits(o), bits, "bits") ? -1 : 0;
    if (!rc && field(c, "op")) {
        const char *op = NULL;
        uint64_t input = 0, out = 0x5a5a5a5a5a5a5a5aULL;
        if (get_str(c, "op", &op) || get_u64(c, "input", &input) || !cJSON_IsString(err)) rc = fail("bad op case");
        else if (strcmp(op, "encode") == 0) rc = expect_error(snowmint_opaque_encode(o, input, &out), err->valuestring, op);
        else if (strcmp(op, "decode") == 0) rc = expect_error(snowmint_opaque_decode(o, input, &out), err->valuestring, op);
        else rc = fail("unknown op %s", op);
        if (!rc && out != 0x5a5a5a5a5a5a5a5aULL) rc = fail("output written on error");
        if (!rc) rc = expect_error(snowmint_opaque_encode_many(o, &input, 1), err->valuestring, "encode_many");
    } else if (!rc) {
        const cJSON *ids = field(c, "ids"), *tokens = field(c, "tokens");
        int n = cJSON_GetArraySize(ids);
        if (err || !cJSON_IsArray(ids) || !cJSON_IsArray(tokens) || n == 0 || n != cJSON_GetArraySize(tokens) || n > 64)
            rc = fail("ids and tokens must be arrays of one length (1..64)");
        uint64_t batch[64];
        for (int i = 0; i < n && !rc; i++) {
            uint64_t id = 0, token = 0, got = 0;
            rc = as_u64(cJSON_GetArrayItem(ids, i), "ids[i]", &id) || as_u64(cJSON_GetArrayItem(tokens, i), "tokens[i]", &token) ||
                         expect_ok(snowmint_opaque_encode(o, id, &got), "encode") || expect_eq(got, token, "encode") ||
                         expect_ok(snowmint_opaque_decode(o, token, &got), "decode") || expect_eq(got, id, "decode")
                     ? -1
                     : 0;
            batch[i] = id;
        }
        if (!rc) rc = expect_ok(snowmint_opaque_encode_many(o, batch, (size_t)n), "encode_many");
        for (int i = 0; i < n && !rc; i++) {
            uint64_t token = 0;
            rc = as_u64(cJSON_GetArrayItem(tokens, i), "tokens[i]", &token) || expect_eq(batch[i], token, "encode_many") ? -1 : 0;
        }
        if (!rc) rc = expect_ok(snowmint_opaque_decode_many(o, batch, (size_t)n), "decode_many");
        for (int i = 0; i < n && !rc; i++) {
            uint64_t id = 0;
            rc = as_u64(cJSON_GetArrayItem(ids, i), "ids[i]", &id) || expect_eq(batch[i], id, "decode_many") ? -1 : 0;
        }
    }
    snowmint_opaque_free(o);
    return rc;
}

/* ---- driver ---- */

static int passed, failed;

/* With SNOWMINT_CONFORMANCE_DIR set, appends "file<TAB>case<TAB>pass|fail" to $SNOWMINT_CONFORMANCE_DIR/c.txt
 * (checked by scripts/check-conformance.py; the runs of several builds append to the same file). A record
 * that cannot be written is a failure. */
static void record_case(const char *file, const char *name, int ok) {
    const char *dir = getenv("SNOWMINT_CONFORMANCE_DIR");
    if (!dir || !*dir) return;
    char path[4096];
    snprintf(path, sizeof path, "%s/c.txt", dir);
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "FAIL cannot create %s: %s\n", dir, strerror(errno));
        failed++;
        return;
    }
    FILE *f = fopen(path, "a");
    int bad = !f;
    if (f) {
        bad = fprintf(f, "%s\t%s\t%s\n", file, name, ok ? "pass" : "fail") < 0;
        bad |= fclose(f) != 0;
    }
    if (bad) {
        fprintf(stderr, "FAIL cannot append to %s: %s\n", path, strerror(errno));
        failed++;
    }
}

static int run_case(const char *file, const cJSON *c) {
    if (strcmp(file, "layouts.json") == 0) return run_layout_case(c);
    if (strcmp(file, "generate.json") == 0) {
        int a = run_generate_case(c, 0);
        return a ? a : run_generate_case(c, 1);
    }
    if (strcmp(file, "clock_readings.json") == 0) return run_clock_case(c);
    if (strcmp(file, "decode.json") == 0) return run_decode_case(c);
    if (strcmp(file, "compose.json") == 0) return run_compose_case(c);
    if (strcmp(file, "encodings.json") == 0) return run_encoding_case(c);
    if (strcmp(file, "opaque.json") == 0) return run_opaque_case(c);
#ifndef SNOWMINT_ID_ONLY
    if (strcmp(file, "node_sources.json") == 0) return run_node_source_case(c);
#endif
    return fail("no runner for file %s", file);
}

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t n = fread(buf + len, 1, cap - len - 1, f);
        len += n;
        if (n == 0) break;
        if (len + 1 == cap) {
            char *bigger = realloc(buf, cap *= 2);
            if (!bigger) free(buf);
            buf = bigger;
        }
    }
    fclose(f);
    if (buf) buf[len] = 0;
    return buf;
}

static void run_file(const char *dir, const char *file) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    cur_file = file;
    cur_case = "(file)";
    case_failed = 0;
    char *text = read_file(path);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    static const char *const TOP[] = {"cases", NULL};
    const cJSON *cases = root ? field(root, "cases") : NULL;
    int file_passed = 0, file_failed = 0;
    if (!root) fail("cannot read or parse %s", path);
    else if (check_keys(root, "file", TOP)) {
    } else if (!cJSON_IsArray(cases) || cJSON_GetArraySize(cases) == 0) fail("no cases");
    if (case_failed) {
        fprintf(stderr, "FAIL %s: %s\n", file, fail_text);
        failed++;
    } else {
        for (const cJSON *c = cases->child; c; c = c->next) {
            case_failed = 0;
            const cJSON *name = field(c, "name");
            cur_case = cJSON_IsString(name) ? name->valuestring : "(unnamed)";
            if (!cJSON_IsString(name)) fail("case without a string name");
            for (const cJSON *d = cases->child; d != c && !case_failed; d = d->next) {
                const cJSON *other = field(d, "name");
                if (cJSON_IsString(other) && strcmp(other->valuestring, cur_case) == 0) fail("duplicate case name");
            }
            if (!case_failed) run_case(file, c);
            record_case(file, cur_case, !case_failed);
            if (case_failed) {
                fprintf(stderr, "FAIL %s / %s: %s\n", file, cur_case, fail_text);
                file_failed++;
            } else {
                file_passed++;
            }
        }
        printf("%-22s %4d passed, %d failed\n", file, file_passed, file_failed);
        passed += file_passed;
        failed += file_failed;
    }
    cJSON_Delete(root);
    free(text);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

#ifndef SNOWMINT_VECTORS_NO_MAIN
int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s VECTORS_DIR\n", argv[0]);
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        fprintf(stderr, "cannot open %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    char *names[256];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 256) {
        size_t len = strlen(e->d_name);
        if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, n, sizeof names[0], by_name);
    if (n == 0) {
        fprintf(stderr, "FAIL: no *.json files in %s\n", argv[1]);
        failed++;
    }
    for (size_t i = 0; i < n; i++) {
#ifdef SNOWMINT_ID_ONLY
        if (strcmp(names[i], "node_sources.json") == 0) {
            printf("%-22s skipped: node sources are the coordination library's (not in the ID-only build)\n", names[i]);
            free(names[i]);
            continue;
        }
#endif
        run_file(argv[1], names[i]);
        free(names[i]);
    }
    printf("vectors: %d passed, %d failed (%zu files)\n", passed, failed, n);
    return failed ? 1 : 0;
}
#endif /* SNOWMINT_VECTORS_NO_MAIN */
