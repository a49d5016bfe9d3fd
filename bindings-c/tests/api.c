/*
 * API tests: every bad input gives its code and leaves outputs untouched; the good paths work.
 * Prints "api: N passed, M failed"; exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "snowmint.h"

static int passed, failed;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (cond) {                                                                   \
            passed++;                                                                 \
        } else {                                                                      \
            failed++;                                                                 \
            fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);           \
        }                                                                             \
    } while (0)

#define CHECK_RC(call, want) CHECK_RC_((call), (want), #call)
static void CHECK_RC_(snowmint_result got, snowmint_result want, const char *what) {
    if (got == want) {
        passed++;
    } else {
        char msg[512];
        snowmint_last_error_message(msg, sizeof msg, NULL);
        failed++;
        fprintf(stderr, "FAIL %s: expected %s, got %s (%s)\n", what, snowmint_result_name(want),
                snowmint_result_name(got), msg);
    }
}

static const char *last_message(void) {
    static char buf[512];
    if (snowmint_last_error_message(buf, sizeof buf, NULL) != SNOWMINT_RESULT_OK) buf[0] = 0;
    return buf;
}

static const uint64_t SENTINEL = 0x5a5a5a5a5a5a5a5aULL;
static const uint64_t TWITTER_EPOCH_MS = 1288834974657ULL;

typedef struct {
    uint64_t now;
} fixed_clock;
static uint64_t read_fixed(void *p) { return ((fixed_clock *)p)->now; }
static double read_nan(void *p) {
    (void)p;
    return NAN;
}
static double read_fraction(void *p) {
    (void)p;
    return 1700000000000.5;
}

static void test_codes(void) {
    CHECK(strcmp(snowmint_result_name(SNOWMINT_RESULT_OK), "OK") == 0);
    CHECK(strcmp(snowmint_result_name(SNOWMINT_RESULT_NODE_ID_OUT_OF_RANGE), "NODE_ID_OUT_OF_RANGE") == 0);
    CHECK(strcmp(snowmint_result_name(SNOWMINT_RESULT_BUFFER_TOO_SMALL), "BUFFER_TOO_SMALL") == 0);
    CHECK(strcmp(snowmint_result_name(9999), "unknown result code") == 0);
    CHECK(strcmp(snowmint_result_message(SNOWMINT_RESULT_PARSE), "malformed ID string") == 0);
    CHECK(strcmp(snowmint_result_message(SNOWMINT_RESULT_OK), "ok") == 0);
    CHECK(strcmp(snowmint_result_message(12345), "unknown result code") == 0);
    CHECK(SNOWMINT_RESULT_INVALID_LAYOUT == 1 && SNOWMINT_RESULT_FORKED == 12 && SNOWMINT_RESULT_PANIC == 102);
    CHECK(strcmp(snowmint_version(), "0.1.0") == 0);
}

static void test_null_pointers(void) {
    snowmint_layout *l = NULL;
    snowmint_generator *g = NULL;
    snowmint_shared_generator *sg = NULL;
    uint64_t id = SENTINEL, buf[4] = {SENTINEL, SENTINEL, SENTINEL, SENTINEL};
    snowmint_layout_config cfg;
    snowmint_layout_info info;
    snowmint_decoded d;
    char text[32];
    uint32_t n32 = 77;
    CHECK_RC(snowmint_layout_new_preset("twitter", &l), SNOWMINT_RESULT_OK);

    CHECK_RC(snowmint_layout_new_preset(NULL, &l), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_layout_new_preset("twitter", NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_layout_new(NULL, &l), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_layout_config_default(&cfg), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_layout_new(&cfg, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_layout_config_default(NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_layout_new_from_preset(0, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_layout_new_snowcast(0, 1024, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_layout_new_hazelcast(0, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_layout_get_info(NULL, &info), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_layout_get_info(l, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_clock_reading_to_ns(NULL, 1.0, &id), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_clock_reading_to_ns(l, 1.0, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_decode(NULL, 1, &d), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_decode(l, 1, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_compose(NULL, 1, 1, 1, &id), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_compose(l, 1, 1, 1, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_min_id_at_ms(NULL, TWITTER_EPOCH_MS, &id), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_min_id_at_ms(l, TWITTER_EPOCH_MS, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_min_id_at_ns(NULL, 0, &id), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_encode(SNOWMINT_ENCODING_HEX, 1, NULL, sizeof text, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_parse(SNOWMINT_ENCODING_HEX, NULL, &id), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_parse(SNOWMINT_ENCODING_HEX, "ff", NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_parse_any(NULL, &id), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_parse_any("12", NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_encoding_from_name(NULL, &n32), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_encoding_from_name("hex", NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_policy_from_name(NULL, &n32), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_order_from_name(NULL, &n32), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_options_default(NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_generator_new(NULL, 1, NULL, &g), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_generator_new(l, 1, NULL, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_shared_generator_new(NULL, 1, NULL, &sg), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_shared_generator_new(l, 1, NULL, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_next_id(NULL, &id), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_next_ids(NULL, buf, 4), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_shared_next_id(NULL, &id), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_shared_next_ids(NULL, buf, 4), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_generator_state(NULL, &id), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_generator_restore(NULL, 5), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_shared_generator_state(NULL, &id), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_shared_generator_restore(NULL, 5), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_last_error_info(NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK(id == SENTINEL && buf[0] == SENTINEL && n32 == 77 && g == NULL && sg == NULL);
    CHECK(strstr(last_message(), "NULL") != NULL);

    CHECK_RC(snowmint_generator_new(l, 1, NULL, &g), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_shared_generator_new(l, 1, NULL, &sg), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_next_id(g, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_next_ids(g, NULL, 4), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_next_ids(g, NULL, 0), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_shared_next_id(sg, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_shared_next_ids(sg, NULL, 4), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_shared_next_ids(sg, NULL, 0), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_generator_state(g, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_shared_generator_state(sg, NULL), SNOWMINT_RESULT_NULL_POINTER);
    /* Freeing NULL is a no-op. */
    snowmint_layout_free(NULL);
    snowmint_generator_free(NULL);
    snowmint_shared_generator_free(NULL);
    snowmint_generator_free(g);
    snowmint_shared_generator_free(sg);
    snowmint_layout_free(l);
}

static void expect_invalid_layout(snowmint_result r, snowmint_layout **l, const char *field_name) {
    CHECK_RC(r, SNOWMINT_RESULT_INVALID_LAYOUT);
    CHECK(*l == NULL);
    if (!strstr(last_message(), field_name)) {
        failed++;
        fprintf(stderr, "FAIL: message \"%s\" does not name %s\n", last_message(), field_name);
    } else {
        passed++;
    }
}

static void test_invalid_layouts(void) {
    snowmint_layout_config cfg;
    snowmint_layout *l = NULL;
    snowmint_layout_config_default(&cfg);
    cfg.timestamp_bits = 0;
    expect_invalid_layout(snowmint_layout_new(&cfg, &l), &l, "timestamp_bits");
    snowmint_layout_config_default(&cfg);
    cfg.timestamp_bits = 50;
    expect_invalid_layout(snowmint_layout_new(&cfg, &l), &l, "timestamp_bits + node_bits + sequence_bits");
    snowmint_layout_config_default(&cfg);
    cfg.tick_ns = 0;
    expect_invalid_layout(snowmint_layout_new(&cfg, &l), &l, "tick_ns");
    snowmint_layout_config_default(&cfg);
    cfg.order = 7;
    expect_invalid_layout(snowmint_layout_new(&cfg, &l), &l, "order");
    snowmint_layout_config_default(&cfg);
    cfg.node_split_bits = 11;
    expect_invalid_layout(snowmint_layout_new(&cfg, &l), &l, "node_split_bits");
    snowmint_layout_config_default(&cfg);
    cfg.node_bits = 64;
    expect_invalid_layout(snowmint_layout_new(&cfg, &l), &l, "node_bits");
    snowmint_layout_config_default(&cfg);
    cfg.epoch_ms = UINT64_MAX;
    expect_invalid_layout(snowmint_layout_new(&cfg, &l), &l, "epoch_ms");
    expect_invalid_layout(snowmint_layout_new_preset("nope", &l), &l, "preset");
    expect_invalid_layout(snowmint_layout_new_preset("snowcast", &l), &l, "snowcast");
    expect_invalid_layout(snowmint_layout_new_preset("tw\xff", &l), &l, "preset");
    expect_invalid_layout(snowmint_layout_new_from_preset(99, &l), &l, "preset");
    expect_invalid_layout(snowmint_layout_new_snowcast(0, 100, &l), &l, "node_count");
    expect_invalid_layout(snowmint_layout_new_hazelcast(70000, &l), &l, "node_id_offset");

    uint32_t n = 77;
    CHECK_RC(snowmint_order_from_name("sideways", &n), SNOWMINT_RESULT_INVALID_LAYOUT);
    CHECK_RC(snowmint_policy_from_name("sometimes", &n), SNOWMINT_RESULT_INVALID_ARGUMENT);
    CHECK_RC(snowmint_encoding_from_name("base64", &n), SNOWMINT_RESULT_INVALID_ARGUMENT);
    CHECK(n == 77);
    CHECK_RC(snowmint_policy_from_name("strict", &n), SNOWMINT_RESULT_OK);
    CHECK(n == SNOWMINT_POLICY_STRICT);
    CHECK_RC(snowmint_encoding_from_name("base58", &n), SNOWMINT_RESULT_OK);
    CHECK(n == SNOWMINT_ENCODING_BASE58);
}

static void test_layout_info(void) {
    snowmint_layout *l = NULL;
    snowmint_layout_info info;
    CHECK_RC(snowmint_layout_new_from_preset(SNOWMINT_PRESET_TWITTER, &l), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_layout_get_info(l, &info), SNOWMINT_RESULT_OK);
    CHECK(info.total_bits == 63 && info.node_count == 1024 && info.ids_per_tick == 4096 && info.max_node_id == 1023);
    CHECK(info.epoch_ms == TWITTER_EPOCH_MS && info.clock_unit == SNOWMINT_CLOCK_UNIT_MS);
    CHECK(strcmp(info.lifespan_end_iso, "2080-07-10T17:30:30.209Z") == 0);
    snowmint_layout_free(l);
    CHECK_RC(snowmint_layout_new_from_preset(SNOWMINT_PRESET_DECIMAL, &l), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_layout_get_info(l, &info), SNOWMINT_RESULT_OK);
    CHECK(info.clock_unit == SNOWMINT_CLOCK_UNIT_NS && info.node_count == 100);
    snowmint_layout_free(l);
    CHECK_RC(snowmint_layout_new_snowcast(TWITTER_EPOCH_MS, 1000, &l), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_layout_get_info(l, &info), SNOWMINT_RESULT_OK);
    CHECK(info.node_count == 1024 && info.node_bits == 10 && info.sequence_bits == 13);
    snowmint_layout_free(l);
}

static void test_decode_compose(void) {
    snowmint_layout *l = NULL;
    snowmint_decoded d;
    uint64_t id = SENTINEL;
    CHECK_RC(snowmint_layout_new_preset("twitter", &l), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_decode(l, 1212161512043450368ULL, &d), SNOWMINT_RESULT_OK);
    CHECK(d.unix_ms == 1577836800000ULL && d.node == 1 && d.sequence == 0);
    CHECK(strcmp(d.iso, "2020-01-01T00:00:00.000Z") == 0);
    memset(&d, 0x5a, sizeof d);
    CHECK_RC(snowmint_decode(l, UINT64_MAX, &d), SNOWMINT_RESULT_INVALID_ID);
    CHECK(d.id == SENTINEL);
    CHECK_RC(snowmint_compose(l, 1, 1024, 0, &id), SNOWMINT_RESULT_NODE_ID_OUT_OF_RANGE);
    CHECK_RC(snowmint_compose(l, 1, 0, 4096, &id), SNOWMINT_RESULT_INVALID_ARGUMENT);
    CHECK_RC(snowmint_compose(l, (1ULL << 41), 0, 0, &id), SNOWMINT_RESULT_LAYOUT_EXHAUSTED);
    CHECK_RC(snowmint_min_id_at_ms(l, 1000, &id), SNOWMINT_RESULT_CLOCK_BEFORE_EPOCH);
    CHECK_RC(snowmint_min_id_at_ms(l, UINT64_MAX, &id), SNOWMINT_RESULT_INVALID_CLOCK);
    CHECK(id == SENTINEL);
    CHECK_RC(snowmint_compose(l, 5, 3, 2, &id), SNOWMINT_RESULT_OK);
    CHECK(id == ((5ULL << 22) | (3ULL << 12) | 2));
    CHECK_RC(snowmint_min_id_at_ms(l, TWITTER_EPOCH_MS + 5, &id), SNOWMINT_RESULT_OK);
    CHECK(id == (5ULL << 22));
    snowmint_layout_free(l);
}

static void test_strings(void) {
    char buf[SNOWMINT_ENCODED_CAPACITY];
    char small[5] = "abcd";
    size_t len = 999;
    uint64_t id = SENTINEL;
    snowmint_error_info info;

    CHECK_RC(snowmint_encode(SNOWMINT_ENCODING_HEX, 255, buf, sizeof buf, &len), SNOWMINT_RESULT_OK);
    CHECK(strcmp(buf, "00000000000000ff") == 0 && len == 16);
    CHECK_RC(snowmint_encode(SNOWMINT_ENCODING_DEC, UINT64_MAX, buf, sizeof buf, &len), SNOWMINT_RESULT_OK);
    CHECK(strcmp(buf, "18446744073709551615") == 0 && len == 20);
    CHECK_RC(snowmint_encode(SNOWMINT_ENCODING_BASE58, 0, buf, sizeof buf, NULL), SNOWMINT_RESULT_OK);
    CHECK(strcmp(buf, "11111111111") == 0);
    /* Short buffers: untouched, the needed length reported. */
    len = 999;
    CHECK_RC(snowmint_encode(SNOWMINT_ENCODING_HEX, 255, small, sizeof small, &len), SNOWMINT_RESULT_BUFFER_TOO_SMALL);
    CHECK(len == 16 && strcmp(small, "abcd") == 0);
    CHECK_RC(snowmint_last_error_info(&info), SNOWMINT_RESULT_OK);
    CHECK(info.result == SNOWMINT_RESULT_BUFFER_TOO_SMALL && info.needed == 17);
    CHECK_RC(snowmint_encode(SNOWMINT_ENCODING_HEX, 255, small, 16, &len), SNOWMINT_RESULT_BUFFER_TOO_SMALL);
    len = 0;
    CHECK_RC(snowmint_encode(SNOWMINT_ENCODING_BASE32, 1, NULL, 0, &len), SNOWMINT_RESULT_BUFFER_TOO_SMALL);
    CHECK(len == 13);
    CHECK_RC(snowmint_encode(SNOWMINT_ENCODING_BASE32, 1, buf, 14, &len), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_encode(42, 1, buf, sizeof buf, &len), SNOWMINT_RESULT_INVALID_ARGUMENT);
    CHECK(strstr(last_message(), "encoding") != NULL);

    /* Malformed strings: the code, the position, the character named. */
    CHECK_RC(snowmint_parse(SNOWMINT_ENCODING_BASE58, "3hs0qtU4AFc", &id), SNOWMINT_RESULT_PARSE);
    CHECK_RC(snowmint_last_error_info(&info), SNOWMINT_RESULT_OK);
    CHECK(info.result == SNOWMINT_RESULT_PARSE && info.position == 3);
    CHECK(strcmp(last_message(), "invalid character '0' at position 3 for a base58 ID") == 0);
    CHECK_RC(snowmint_parse(SNOWMINT_ENCODING_DEC, "", &id), SNOWMINT_RESULT_PARSE);
    CHECK_RC(snowmint_parse(SNOWMINT_ENCODING_DEC, "18446744073709551616", &id), SNOWMINT_RESULT_PARSE);
    CHECK_RC(snowmint_parse(SNOWMINT_ENCODING_HEX, "0x", &id), SNOWMINT_RESULT_PARSE);
    CHECK_RC(snowmint_parse(SNOWMINT_ENCODING_DEC, "12\xff", &id), SNOWMINT_RESULT_PARSE);
    CHECK_RC(snowmint_last_error_info(&info), SNOWMINT_RESULT_OK);
    CHECK(info.position == 2);
    CHECK_RC(snowmint_parse_any("hello", &id), SNOWMINT_RESULT_PARSE);
    CHECK_RC(snowmint_parse(9, "12", &id), SNOWMINT_RESULT_INVALID_ARGUMENT);
    CHECK(id == SENTINEL);
    CHECK_RC(snowmint_parse(SNOWMINT_ENCODING_HEX, "0xFF", &id), SNOWMINT_RESULT_OK);
    CHECK(id == 255);
    CHECK_RC(snowmint_parse_any("00000000000000ff", &id), SNOWMINT_RESULT_OK);
    CHECK(id == 255);

    /* The message accessor itself reports short buffers without changing the record. */
    char tiny[4];
    len = 0;
    CHECK_RC(snowmint_last_error_message(tiny, sizeof tiny, &len), SNOWMINT_RESULT_BUFFER_TOO_SMALL);
    CHECK(len > 4);
    CHECK_RC(snowmint_last_error_message(NULL, 0, &len), SNOWMINT_RESULT_BUFFER_TOO_SMALL);
    CHECK_RC(snowmint_last_error_info(&info), SNOWMINT_RESULT_OK);
    CHECK(info.result == SNOWMINT_RESULT_INVALID_ARGUMENT); /* from snowmint_parse(9, ...) */
}

static void test_generators(void) {
    snowmint_layout *l = NULL;
    snowmint_generator *g = NULL;
    snowmint_shared_generator *sg = NULL;
    snowmint_options o;
    uint64_t id = SENTINEL, prev = 0;
    CHECK_RC(snowmint_layout_new_preset("twitter", &l), SNOWMINT_RESULT_OK);

    /* Bad node IDs and options. */
    CHECK_RC(snowmint_generator_new(l, 1024, NULL, &g), SNOWMINT_RESULT_NODE_ID_OUT_OF_RANGE);
    CHECK(strstr(last_message(), "1024") != NULL && g == NULL);
    CHECK_RC(snowmint_shared_generator_new(l, UINT64_MAX, NULL, &sg), SNOWMINT_RESULT_NODE_ID_OUT_OF_RANGE);
    CHECK(sg == NULL);
    snowmint_options_default(&o);
    o.policy = 9;
    CHECK_RC(snowmint_generator_new(l, 1, &o, &g), SNOWMINT_RESULT_INVALID_ARGUMENT);
    snowmint_options_default(&o);
    o.sequence_start = 9;
    CHECK_RC(snowmint_generator_new(l, 1, &o, &g), SNOWMINT_RESULT_INVALID_ARGUMENT);
    snowmint_options_default(&o);
    o.clock = read_fixed;
    o.clock_f64 = read_nan;
    CHECK_RC(snowmint_shared_generator_new(l, 1, &o, &sg), SNOWMINT_RESULT_INVALID_ARGUMENT);
    CHECK(g == NULL && sg == NULL);

    /* System clock: increasing IDs for our node. */
    CHECK_RC(snowmint_generator_new(l, 7, NULL, &g), SNOWMINT_RESULT_OK);
    int ok = 1;
    for (int i = 0; i < 10000; i++) {
        if (snowmint_next_id(g, &id) != SNOWMINT_RESULT_OK || id <= prev) ok = 0;
        prev = id;
    }
    CHECK(ok);
    snowmint_decoded d;
    CHECK_RC(snowmint_decode(l, id, &d), SNOWMINT_RESULT_OK);
    CHECK(d.node == 7);
    uint64_t batch[5000];
    CHECK_RC(snowmint_next_ids(g, batch, 5000), SNOWMINT_RESULT_OK);
    ok = batch[0] > prev;
    for (int i = 1; i < 5000; i++) ok &= batch[i] > batch[i - 1];
    CHECK(ok);
    uint64_t state = 0;
    CHECK_RC(snowmint_generator_state(g, &state), SNOWMINT_RESULT_OK);
    CHECK(state > 0);
    snowmint_generator_free(g);
    g = NULL;

    /* Restore: a restarted generator never goes below the persisted mark. */
    CHECK_RC(snowmint_generator_new(l, 7, NULL, &g), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_generator_restore(g, state + 100000), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_OK);
    CHECK(id > batch[4999]);
    snowmint_generator_free(g);
    g = NULL;

    /* Fail policy with a frozen injected clock: capacity, then TOO_FAR_AHEAD with retry_after_ms. */
    fixed_clock fc = {TWITTER_EPOCH_MS + 1000};
    snowmint_options_default(&o);
    o.policy = SNOWMINT_POLICY_FAIL;
    o.max_ahead_ns = 1000000; /* 1 ms: 2 ticks of 4096 */
    o.clock = read_fixed;
    o.clock_userdata = &fc;
    CHECK_RC(snowmint_shared_generator_new(l, 3, &o, &sg), SNOWMINT_RESULT_OK);
    uint64_t big[8192];
    CHECK_RC(snowmint_shared_next_ids(sg, big, 8192), SNOWMINT_RESULT_OK);
    CHECK(big[0] == (1000ULL << 22 | 3ULL << 12) && big[8191] == (1001ULL << 22 | 3ULL << 12 | 4095));
    id = SENTINEL;
    CHECK_RC(snowmint_shared_next_id(sg, &id), SNOWMINT_RESULT_TOO_FAR_AHEAD);
    CHECK(id == SENTINEL);
    snowmint_error_info info;
    CHECK_RC(snowmint_last_error_info(&info), SNOWMINT_RESULT_OK);
    CHECK(info.result == SNOWMINT_RESULT_TOO_FAR_AHEAD && info.retry_after_ms == 1);
    static uint64_t huge[20000];
    CHECK_RC(snowmint_shared_next_ids(sg, huge, 20000), SNOWMINT_RESULT_INVALID_ARGUMENT); /* > 2 ticks */
    CHECK_RC(snowmint_shared_next_ids(sg, big, SIZE_MAX), SNOWMINT_RESULT_INVALID_ARGUMENT);
    CHECK(big[0] == (1000ULL << 22 | 3ULL << 12));
    fc.now += 1;
    CHECK_RC(snowmint_shared_next_id(sg, &id), SNOWMINT_RESULT_OK);
    CHECK(id == (1002ULL << 22 | 3ULL << 12));
    snowmint_shared_generator_free(sg);
    sg = NULL;

    /* Wait policy with a frozen clock cannot wait forever: TOO_FAR_AHEAD, no hang. */
    o.policy = SNOWMINT_POLICY_WAIT;
    CHECK_RC(snowmint_generator_new(l, 3, &o, &g), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_next_ids(g, big, 8192), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_TOO_FAR_AHEAD);
    snowmint_generator_free(g);
    g = NULL;

    /* Strict: any backwards step. Before the epoch: its own code. */
    o.policy = SNOWMINT_POLICY_STRICT;
    fc.now = TWITTER_EPOCH_MS + 5000;
    CHECK_RC(snowmint_generator_new(l, 3, &o, &g), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_OK);
    fc.now -= 1;
    CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_CLOCK_MOVED_BACKWARDS);
    fc.now = 1000;
    CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_CLOCK_BEFORE_EPOCH);
    fc.now = UINT64_MAX;
    CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_INVALID_CLOCK);
    snowmint_generator_free(g);
    g = NULL;

    /* Floating-point clocks: NaN and fractions are INVALID_CLOCK, never rounded. */
    snowmint_options_default(&o);
    o.clock_f64 = read_nan;
    CHECK_RC(snowmint_generator_new(l, 3, &o, &g), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_INVALID_CLOCK);
    snowmint_generator_free(g);
    g = NULL;
    o.clock_f64 = read_fraction;
    CHECK_RC(snowmint_shared_generator_new(l, 3, &o, &sg), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_shared_next_id(sg, &id), SNOWMINT_RESULT_INVALID_CLOCK);
    CHECK(strstr(last_message(), "whole") != NULL);
    snowmint_shared_generator_free(sg);
    sg = NULL;
    CHECK_RC(snowmint_clock_reading_to_ns(l, 1.5, &id), SNOWMINT_RESULT_INVALID_CLOCK);
    CHECK_RC(snowmint_clock_reading_to_ns(l, 2.0, &id), SNOWMINT_RESULT_OK);
    CHECK(id == 2000000);

    /* Random sequence start, seeded: reproducible and still increasing. */
    snowmint_options_default(&o);
    o.sequence_start = SNOWMINT_SEQUENCE_START_SEEDED;
    o.seed = 123;
    o.clock = read_fixed;
    o.clock_userdata = &fc;
    fc.now = TWITTER_EPOCH_MS + 1000;
    uint64_t a = 0, b = 0;
    CHECK_RC(snowmint_generator_new(l, 3, &o, &g), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_next_id(g, &a), SNOWMINT_RESULT_OK);
    snowmint_generator_free(g);
    CHECK_RC(snowmint_generator_new(l, 3, &o, &g), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_next_id(g, &b), SNOWMINT_RESULT_OK);
    CHECK(a == b);
    snowmint_generator_free(g);
    o.sequence_start = SNOWMINT_SEQUENCE_START_RANDOM;
    CHECK_RC(snowmint_generator_new(l, 3, &o, &g), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_next_id(g, &a), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_next_id(g, &b), SNOWMINT_RESULT_OK);
    CHECK(b > a);
    snowmint_generator_free(g);
    g = NULL;
    snowmint_layout_free(l);

    /* The decimal (Chronicle) generator: Unix ns with the host ID in the last two digits. */
    CHECK_RC(snowmint_layout_new_preset("decimal", &l), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_generator_new(l, 100, NULL, &g), SNOWMINT_RESULT_NODE_ID_OUT_OF_RANGE);
    fc.now = 1640700422954100100ULL;
    snowmint_options_default(&o);
    o.clock = read_fixed;
    o.clock_userdata = &fc;
    CHECK_RC(snowmint_generator_new(l, 28, &o, &g), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_OK);
    CHECK(id == 1640700422954100128ULL);
    CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_OK);
    CHECK(id == 1640700422954100228ULL);
    CHECK_RC(snowmint_decode(l, 1640700422954100128ULL, &d), SNOWMINT_RESULT_OK);
    CHECK(d.node == 28 && strcmp(d.iso, "2021-12-28T14:07:02.954100100Z") == 0);
    snowmint_generator_free(g);
    snowmint_layout_free(l);
}

/* Errors on the system clock (the minting path of snowmint_next_id / snowmint_shared_next_id: a
 * generator on the default clock, not forked): recorded as every other error is, *id_out untouched; a
 * NULL id_out names it. */
static void test_system_clock_errors(void) {
    snowmint_layout_config c;
    CHECK_RC(snowmint_layout_config_default(&c), SNOWMINT_RESULT_OK);
    c.epoch_ms = (uint64_t)time(NULL) * 1000 + 3600000; /* an hour ahead */
    snowmint_layout *future = NULL;
    CHECK_RC(snowmint_layout_new(&c, &future), SNOWMINT_RESULT_OK);
    snowmint_generator *g = NULL;
    snowmint_shared_generator *sg = NULL;
    CHECK_RC(snowmint_generator_new(future, 1, NULL, &g), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_shared_generator_new(future, 1, NULL, &sg), SNOWMINT_RESULT_OK);
    snowmint_error_info info;
    uint64_t id = SENTINEL;
    CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_CLOCK_BEFORE_EPOCH);
    CHECK(id == SENTINEL && strstr(last_message(), "epoch") != NULL);
    CHECK_RC(snowmint_last_error_info(&info), SNOWMINT_RESULT_OK);
    CHECK(info.result == SNOWMINT_RESULT_CLOCK_BEFORE_EPOCH);
    CHECK_RC(snowmint_shared_next_id(sg, &id), SNOWMINT_RESULT_CLOCK_BEFORE_EPOCH);
    CHECK(id == SENTINEL && strstr(last_message(), "epoch") != NULL);
    CHECK_RC(snowmint_next_id(g, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK(strstr(last_message(), "id_out") != NULL);
    CHECK_RC(snowmint_shared_next_id(sg, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK(strstr(last_message(), "id_out") != NULL);
    snowmint_generator_free(g);
    snowmint_shared_generator_free(sg);
    snowmint_layout_free(future);
}

/* A generator created before fork() refuses to mint in the child (FORKED); a new one works there. */
static void test_fork(void) {
    snowmint_layout *l = NULL;
    snowmint_shared_generator *sg = NULL;
    snowmint_generator *g = NULL;
    uint64_t id = 0;
    CHECK_RC(snowmint_layout_new_preset("twitter", &l), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_shared_generator_new(l, 1, NULL, &sg), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_generator_new(l, 1, NULL, &g), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_shared_next_id(sg, &id), SNOWMINT_RESULT_OK);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        int code = 0;
        uint64_t child_id = 0, buf[2];
        snowmint_generator *fresh = NULL;
        if (snowmint_shared_next_id(sg, &child_id) != SNOWMINT_RESULT_FORKED) code |= 1;
        if (snowmint_next_id(g, &child_id) != SNOWMINT_RESULT_FORKED) code |= 2;
        if (snowmint_shared_next_ids(sg, buf, 2) != SNOWMINT_RESULT_FORKED) code |= 4;
        if (snowmint_next_ids(g, buf, 2) != SNOWMINT_RESULT_FORKED) code |= 8;
        if (snowmint_generator_new(l, 2, NULL, &fresh) != SNOWMINT_RESULT_OK ||
            snowmint_next_id(fresh, &child_id) != SNOWMINT_RESULT_OK)
            code |= 16;
        snowmint_generator_free(fresh);
        snowmint_generator_free(g);
        snowmint_shared_generator_free(sg);
        snowmint_layout_free(l);
        _exit(code);
    }
    int status = -1;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) fprintf(stderr, "fork child status %d\n", status);
    /* The parent keeps minting. */
    CHECK_RC(snowmint_shared_next_id(sg, &id), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_OK);
    snowmint_generator_free(g);
    snowmint_shared_generator_free(sg);
    snowmint_layout_free(l);
}

static void test_opaque(void) {
    static const uint8_t key[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    snowmint_layout *twitter = NULL, *js53 = NULL;
    CHECK_RC(snowmint_layout_new_preset("twitter", &twitter), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_layout_new_preset("js53", &js53), SNOWMINT_RESULT_OK);
    snowmint_opaque *o = NULL, *untouched = (snowmint_opaque *)0x1;
    CHECK_RC(snowmint_opaque_new(key, 15, twitter, &untouched), SNOWMINT_RESULT_INVALID_ARGUMENT);
    CHECK(strstr(last_message(), "16 bytes") != NULL);
    CHECK(untouched == (snowmint_opaque *)0x1);
    CHECK_RC(snowmint_opaque_new(NULL, 16, twitter, &o), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_opaque_new(key, 16, NULL, &o), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_opaque_new(key, 16, twitter, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_opaque_new(key, 16, js53, &o), SNOWMINT_RESULT_OK);
    CHECK(snowmint_opaque_bits(o) == 53 && snowmint_opaque_bits(NULL) == 0);
    uint64_t token = SENTINEL, id = SENTINEL;
    CHECK_RC(snowmint_opaque_encode(o, 123456789, &token), SNOWMINT_RESULT_OK);
    CHECK(token < (1ULL << 53) && token != 123456789);
    CHECK_RC(snowmint_opaque_decode(o, token, &id), SNOWMINT_RESULT_OK);
    CHECK(id == 123456789);
    id = SENTINEL;
    CHECK_RC(snowmint_opaque_encode(o, 1ULL << 53, &id), SNOWMINT_RESULT_INVALID_ID);
    CHECK_RC(snowmint_opaque_decode(o, UINT64_MAX, &id), SNOWMINT_RESULT_INVALID_ID);
    CHECK(id == SENTINEL && strstr(last_message(), "53 bits") != NULL);
    CHECK_RC(snowmint_opaque_encode(NULL, 1, &id), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_opaque_decode(o, 1, NULL), SNOWMINT_RESULT_NULL_POINTER);
    uint64_t buf[3] = {1, 2, 1ULL << 53};
    CHECK_RC(snowmint_opaque_encode_many(o, buf, 3), SNOWMINT_RESULT_INVALID_ID);
    CHECK(buf[0] == 1 && buf[1] == 2);
    CHECK_RC(snowmint_opaque_encode_many(o, buf, 2), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_opaque_encode(o, 2, &token), SNOWMINT_RESULT_OK);
    CHECK(buf[1] == token);
    CHECK_RC(snowmint_opaque_decode_many(o, buf, 2), SNOWMINT_RESULT_OK);
    CHECK(buf[0] == 1 && buf[1] == 2);
    CHECK_RC(snowmint_opaque_encode_many(o, NULL, 0), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_opaque_decode_many(o, NULL, 1), SNOWMINT_RESULT_NULL_POINTER);
    snowmint_opaque_free(o);
    snowmint_opaque_free(NULL);
    snowmint_layout_config cfg;
    snowmint_layout *narrow = NULL;
    CHECK_RC(snowmint_layout_config_default(&cfg), SNOWMINT_RESULT_OK);
    cfg.timestamp_bits = 19;
    cfg.node_bits = 4;
    cfg.sequence_bits = 8;
    cfg.node_split_bits = 0;
    CHECK_RC(snowmint_layout_new(&cfg, &narrow), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_opaque_new(key, 16, narrow, &o), SNOWMINT_RESULT_INVALID_ARGUMENT);
    CHECK(strstr(last_message(), "32 to 64 bits") != NULL);
    snowmint_layout_free(narrow);
    snowmint_layout_free(twitter);
    snowmint_layout_free(js53);
}

/* What a new user trips over first: ambiguous strings, unknown names, clock units, restarts. */
static double read_seconds_f64(void *p) {
    (void)p;
    return 1700000000.25; /* time(NULL)-style seconds, with a fraction */
}

static void test_edges(void) {
    uint64_t id = SENTINEL;
    uint32_t n = 77;
    /* parse_any never chooses: both readings named, how to choose said. */
    CHECK_RC(snowmint_parse_any("1970065334000000", &id), SNOWMINT_RESULT_PARSE);
    CHECK(id == SENTINEL);
    CHECK(strstr(last_message(), "dec 1970065334000000") != NULL);
    CHECK(strstr(last_message(), "hex 1832972002764259328") != NULL);
    CHECK(strstr(last_message(), "\"hex\"") != NULL);
    CHECK_RC(snowmint_parse_any("1700000000000", &id), SNOWMINT_RESULT_PARSE);
    CHECK(strstr(last_message(), "base32 1405123083739594752") != NULL);
    CHECK_RC(snowmint_parse_any("12345678912", &id), SNOWMINT_RESULT_PARSE);
    CHECK(strstr(last_message(), "base58 7690564481429305") != NULL);
    CHECK_RC(snowmint_parse_any("12345678910", &id), SNOWMINT_RESULT_OK);
    CHECK(id == 12345678910ULL);

    /* Unknown names: the name as given, the nearest, the allowed. */
    snowmint_layout *l = NULL;
    CHECK_RC(snowmint_layout_new_preset("Twitter", &l), SNOWMINT_RESULT_INVALID_LAYOUT);
    CHECK(l == NULL && strstr(last_message(), "\"Twitter\" (did you mean twitter?)") != NULL);
    CHECK(strstr(last_message(), "is 0") == NULL);
    CHECK_RC(snowmint_policy_from_name("Fail", &n), SNOWMINT_RESULT_INVALID_ARGUMENT);
    CHECK(n == 77 && strstr(last_message(), "\"Fail\" (did you mean fail?); allowed: wait, fail, strict") != NULL);
    CHECK_RC(snowmint_encoding_from_name("bas58", &n), SNOWMINT_RESULT_INVALID_ARGUMENT);
    CHECK(strstr(last_message(), "did you mean base58?") != NULL);
    CHECK_RC(snowmint_order_from_name("ts|sq|node", &n), SNOWMINT_RESULT_INVALID_LAYOUT);
    CHECK(strstr(last_message(), "did you mean ts|seq|node?") != NULL);
    /* snowcast by name says how, in C. */
    CHECK_RC(snowmint_layout_new_preset("snowcast", &l), SNOWMINT_RESULT_INVALID_LAYOUT);
    CHECK(strstr(last_message(), "epoch and a node count") != NULL);
    CHECK(strstr(last_message(), "snowmint_layout_new_snowcast(epoch_ms, node_count, &layout)") != NULL);
    CHECK(strstr(last_message(), "::") == NULL);

    /* Clock readings in the wrong unit say so. */
    CHECK_RC(snowmint_layout_new_preset("twitter", &l), SNOWMINT_RESULT_OK);
    snowmint_options o;
    snowmint_generator *g = NULL;
    fixed_clock fc = {1700000000ULL}; /* seconds */
    snowmint_options_default(&o);
    o.clock = read_fixed;
    o.clock_userdata = &fc;
    CHECK_RC(snowmint_generator_new(l, 3, &o, &g), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_INVALID_CLOCK);
    CHECK(strstr(last_message(), "looks like seconds: multiply by 1000") != NULL);
    fc.now = 1700000000000000000ULL; /* nanoseconds */
    CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_INVALID_CLOCK);
    CHECK(strstr(last_message(), "looks like nanoseconds: divide by 1000000") != NULL);
    fc.now = 1700000000000000ULL; /* microseconds */
    CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_INVALID_CLOCK);
    CHECK(strstr(last_message(), "looks like microseconds: divide by 1000") != NULL);
    uint64_t mark = SENTINEL;
    CHECK_RC(snowmint_generator_state(g, &mark), SNOWMINT_RESULT_OK);
    CHECK(mark == 0); /* nothing was minted */
    fc.now = 1700000000000ULL; /* milliseconds: mints */
    CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_OK);
    snowmint_generator_free(g);
    g = NULL;
    snowmint_options_default(&o);
    o.clock_f64 = read_seconds_f64;
    CHECK_RC(snowmint_generator_new(l, 3, &o, &g), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_INVALID_CLOCK);
    CHECK(strstr(last_message(), "looks like seconds") != NULL);
    uint64_t ns = SENTINEL;
    CHECK_RC(snowmint_clock_reading_to_ns(l, 1700000000.0, &ns), SNOWMINT_RESULT_INVALID_CLOCK);
    CHECK(ns == SENTINEL && strstr(last_message(), "multiply by 1000") != NULL);
    snowmint_generator_free(g);
    snowmint_layout_free(l);
}

/* Stats after a scripted clock: a full tick in one batch, an ID that borrows the next tick, a clock
 * 5 ms back (one regression); then, with no running ahead, a wait of exactly 1 ms. The same counts
 * from the single-thread and the shared generator. */
typedef struct {
    const uint64_t *readings;
    size_t n, next;
} script_clock;
static uint64_t read_script(void *p) {
    script_clock *c = p;
    uint64_t r = c->readings[c->next];
    if (c->next + 1 < c->n) c->next++;
    return r;
}

static void test_stats(void) {
    const uint64_t t0 = 1750000000000ULL;
    snowmint_layout *l = NULL;
    CHECK_RC(snowmint_layout_new_preset("twitter", &l), SNOWMINT_RESULT_OK);
    static uint64_t batch[4096];
    for (int shared = 0; shared < 2; shared++) {
        const uint64_t readings[] = {t0, t0, t0 - 5, t0 - 4};
        script_clock c = {readings, 4, 0};
        snowmint_options o;
        snowmint_options_default(&o);
        o.clock = read_script;
        o.clock_userdata = &c;
        snowmint_generator *g = NULL;
        snowmint_shared_generator *sg = NULL;
        snowmint_stats s;
        memset(&s, 0x5a, sizeof s);
        uint64_t id;
        if (shared) {
            CHECK_RC(snowmint_shared_generator_new(l, 1, &o, &sg), SNOWMINT_RESULT_OK);
            CHECK_RC(snowmint_shared_generator_stats(sg, &s), SNOWMINT_RESULT_OK);
            CHECK(s.minted == 0 && s.batches == 0 && s.regressions == 0 && s.wait_ns == 0);
            CHECK_RC(snowmint_shared_next_ids(sg, batch, 4096), SNOWMINT_RESULT_OK);
            for (int i = 0; i < 3; i++) CHECK_RC(snowmint_shared_next_id(sg, &id), SNOWMINT_RESULT_OK);
            CHECK_RC(snowmint_shared_generator_stats(sg, &s), SNOWMINT_RESULT_OK);
        } else {
            CHECK_RC(snowmint_generator_new(l, 1, &o, &g), SNOWMINT_RESULT_OK);
            CHECK_RC(snowmint_next_ids(g, batch, 4096), SNOWMINT_RESULT_OK);
            for (int i = 0; i < 3; i++) CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_OK);
            CHECK_RC(snowmint_generator_stats(g, &s), SNOWMINT_RESULT_OK);
        }
        CHECK(s.minted == 4099 && s.batches == 1 && s.borrowed_ticks == 1 && s.waits == 0 && s.wait_ns == 0 &&
              s.regressions == 1);
        snowmint_generator_free(g);
        snowmint_shared_generator_free(sg);
    }
    /* Wait: max_ahead 0, the 4097th ID at t0 sleeps 1 ms until the clock reads t0 + 1. */
    const uint64_t readings[] = {t0, t0, t0 + 1};
    script_clock c = {readings, 3, 0};
    snowmint_options o;
    snowmint_options_default(&o);
    o.max_ahead_ns = 0;
    o.clock = read_script;
    o.clock_userdata = &c;
    snowmint_generator *g = NULL;
    snowmint_stats s;
    uint64_t id;
    CHECK_RC(snowmint_generator_new(l, 1, &o, &g), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_next_ids(g, batch, 4096), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_next_id(g, &id), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_generator_stats(g, &s), SNOWMINT_RESULT_OK);
    CHECK(s.minted == 4097 && s.batches == 1 && s.waits == 1 && s.wait_ns == 1000000 && s.borrowed_ticks == 0);
    CHECK_RC(snowmint_generator_stats(g, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_generator_stats(NULL, &s), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_shared_generator_stats(NULL, &s), SNOWMINT_RESULT_NULL_POINTER);
    snowmint_generator_free(g);
    snowmint_layout_free(l);
}

int main(void) {
    test_codes();
    test_null_pointers();
    test_invalid_layouts();
    test_layout_info();
    test_decode_compose();
    test_strings();
    test_generators();
    test_system_clock_errors();
    test_fork();
    test_opaque();
    test_edges();
    test_stats();
    printf("api: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
