/*
 * The host-input vectors (tests/host-inputs/host_inputs.json) that C's types can express: node IDs and
 * batch sizes as unsigned integers, node IDs as node-source strings, clock readings as doubles (a
 * snowmint_clock_f64_fn), IDs to decode as uint64_t, encoding names. Cases whose value C cannot pass
 * (negative or fractional integers, bigints past 2^64, booleans, JS-only types, throwing clocks, a
 * layout without one of its required fields, which C's struct always has) are counted as not
 * expressible; custom layouts start from snowmint_layout_config_default (the vectors' defaults); every other case must give exactly the vector's result (the `expect`, or
 * a `c` override).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snowmint.h"

static int failures = 0, ran = 0, skipped = 0;

static char *read_file(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)len + 1);
    if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) { free(buf); buf = NULL; }
    fclose(f);
    if (buf) buf[len] = 0;
    return buf;
}

/* A whole number in 0..2^64 from a decimal string; 0 when it is not one. */
static int u64_of(const char *s, uint64_t *out) {
    if (!s || !*s || *s == '-') return 0;
    uint64_t v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return 0;
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

static double reading;
static double f64_clock(void *userdata) { (void)userdata; return reading; }

static const char *name_of(snowmint_result r) { return r == SNOWMINT_RESULT_OK ? "ok" : snowmint_result_name(r); }

/* A custom layout's fields (`{"layout": {FIELD: typed value}}`) over snowmint_layout_config_default,
 * whose fields the vectors' defaults are (snowmint_host::LayoutFields): C's struct has every field, so
 * a case that leaves a required one out (TYPE elsewhere) is not expressible. 0 when a value is not one
 * C can pass. */
static int layout_config_of(cJSON *fields, snowmint_layout_config *cfg, int *all_required) {
    static const char *required[] = {"timestamp_bits", "node_bits", "sequence_bits", "epoch_ms"};
    snowmint_layout_config_default(cfg);
    *all_required = 1;
    for (size_t i = 0; i < sizeof required / sizeof *required; i++)
        if (!cJSON_GetObjectItem(fields, required[i])) *all_required = 0;
    cJSON *f;
    cJSON_ArrayForEach(f, fields) {
        cJSON *v = f->child;
        const char *type = v->string;
        uint64_t u = 0;
        int is_u64 = (!strcmp(type, "int") || !strcmp(type, "bigint")) && u64_of(v->valuestring, &u);
        if (!strcmp(f->string, "order") && !strcmp(type, "string")) {
            /* An unknown name is an order number C does not define: INVALID_LAYOUT, as elsewhere. */
            cfg->order = !strcmp(v->valuestring, "timestamp_node_sequence") ? SNOWMINT_ORDER_TIMESTAMP_NODE_SEQUENCE
                       : !strcmp(v->valuestring, "timestamp_sequence_node") ? SNOWMINT_ORDER_TIMESTAMP_SEQUENCE_NODE
                       : 99;
        } else if (!strcmp(f->string, "use_sign_bit") && !strcmp(type, "bool")) {
            cfg->use_sign_bit = cJSON_IsTrue(v);
        } else if (is_u64 && u <= UINT32_MAX && !strcmp(f->string, "timestamp_bits")) {
            cfg->timestamp_bits = (uint32_t)u;
        } else if (is_u64 && u <= UINT32_MAX && !strcmp(f->string, "node_bits")) {
            cfg->node_bits = (uint32_t)u;
        } else if (is_u64 && u <= UINT32_MAX && !strcmp(f->string, "sequence_bits")) {
            cfg->sequence_bits = (uint32_t)u;
        } else if (is_u64 && !strcmp(f->string, "epoch_ms")) {
            cfg->epoch_ms = u;
        } else if (is_u64 && !strcmp(f->string, "tick_ns")) {
            cfg->tick_ns = u;
        } else if (is_u64 && !strcmp(f->string, "node_id_offset")) {
            cfg->node_id_offset = u;
        } else {
            return 0;
        }
    }
    return 1;
}

/* Whether layout `l` gives what a case's `fields` say (decimal text; order by name). */
static int layout_fields_match(const snowmint_layout *l, cJSON *want, const char *name) {
    snowmint_layout_info info;
    if (!want || snowmint_layout_get_info(l, &info) != SNOWMINT_RESULT_OK) return want == NULL;
    cJSON *f;
    int ok = 1;
    cJSON_ArrayForEach(f, want) {
        char got[32] = "?";
        if (!strcmp(f->string, "order"))
            snprintf(got, sizeof got, "%s", info.order == SNOWMINT_ORDER_TIMESTAMP_NODE_SEQUENCE ? "timestamp_node_sequence" : "timestamp_sequence_node");
        else if (!strcmp(f->string, "timestamp_bits")) snprintf(got, sizeof got, "%u", info.timestamp_bits);
        else if (!strcmp(f->string, "node_bits")) snprintf(got, sizeof got, "%u", info.node_bits);
        else if (!strcmp(f->string, "sequence_bits")) snprintf(got, sizeof got, "%u", info.sequence_bits);
        else if (!strcmp(f->string, "tick_ns")) snprintf(got, sizeof got, "%llu", (unsigned long long)info.tick_ns);
        else if (!strcmp(f->string, "epoch_ms")) snprintf(got, sizeof got, "%llu", (unsigned long long)info.epoch_ms);
        else if (!strcmp(f->string, "node_id_offset")) snprintf(got, sizeof got, "%llu", (unsigned long long)info.node_id_offset);
        if (strcmp(got, f->valuestring) != 0) {
            fprintf(stderr, "FAIL %s: %s is %s, not %s\n", name, f->string, got, f->valuestring);
            ok = 0;
        }
    }
    return ok;
}

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: host_inputs FILE.json\n"); return 2; }
    char *text = read_file(argv[1]);
    cJSON *root = text ? cJSON_Parse(text) : NULL;
    cJSON *cases = root ? cJSON_GetObjectItem(root, "cases") : NULL;
    if (!cJSON_IsArray(cases)) { fprintf(stderr, "cannot read %s\n", argv[1]); return 2; }
    snowmint_layout *twitter = NULL;
    if (snowmint_layout_new_preset("twitter", &twitter) != SNOWMINT_RESULT_OK) return 2;

    cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        const char *name = cJSON_GetObjectItem(c, "name")->valuestring;
        const char *arg = cJSON_GetObjectItem(c, "arg")->valuestring;
        cJSON *over = cJSON_GetObjectItem(c, "c");
        const char *expect = over ? over->valuestring : cJSON_GetObjectItem(c, "expect")->valuestring;
        cJSON *value = cJSON_GetObjectItem(c, "value")->child;
        const char *type = value->string;
        const char *raw = cJSON_IsString(value) ? value->valuestring : NULL;
        uint64_t u = 0;
        int is_u64 = (!strcmp(type, "int") || !strcmp(type, "bigint")) && u64_of(raw, &u);
        snowmint_result r;
        int expressible = 1;

        if (!strcmp(arg, "node_id") && is_u64) {
            snowmint_generator *g = NULL;
            r = snowmint_generator_new(twitter, u, NULL, &g);
            snowmint_generator_free(g);
        } else if (!strcmp(arg, "node_id") && !strcmp(type, "string")) {
            snowmint_shared_generator *g = NULL;
            r = snowmint_generator_open(raw, twitter, NULL, &g);
            snowmint_shared_generator_free(g);
        } else if (!strcmp(arg, "count") && is_u64) {
            snowmint_options o;
            snowmint_options_default(&o);
            reading = 1750000000000.0;
            o.clock_f64 = f64_clock;
            snowmint_generator *g = NULL;
            r = snowmint_generator_new(twitter, 1, &o, &g);
            if (r == SNOWMINT_RESULT_OK) {
                /* The limit is checked before the buffer is touched: a small buffer is enough to see
                 * the refusal, and a batch within the limit gets a buffer of its size. */
                uint64_t *buf = u <= 1u << 24 ? calloc(u ? (size_t)u : 1, sizeof *buf) : calloc(1, sizeof *buf);
                r = buf ? snowmint_next_ids(g, buf, (size_t)u) : SNOWMINT_RESULT_PANIC;
                free(buf);
            }
            snowmint_generator_free(g);
        } else if (!strcmp(arg, "clock") && (!strcmp(type, "float") || (!strcmp(type, "int") && raw[0] == '-') || is_u64)) {
            reading = strtod(raw, NULL);   /* "NaN", "Infinity", "-1", "1.5" */
            snowmint_options o;
            snowmint_options_default(&o);
            o.clock_f64 = f64_clock;
            snowmint_generator *g = NULL;
            r = snowmint_generator_new(twitter, 1, &o, &g);
            uint64_t id;
            if (r == SNOWMINT_RESULT_OK) r = snowmint_next_id(g, &id);
            snowmint_generator_free(g);
        } else if (!strcmp(arg, "decode") && is_u64) {
            snowmint_decoded d;
            r = snowmint_decode(twitter, u, &d);
        } else if (!strcmp(arg, "decode") && !strcmp(type, "string")) {
            uint64_t id;
            r = snowmint_parse_any(raw, &id);
            if (r == SNOWMINT_RESULT_OK) {
                snowmint_decoded d;
                r = snowmint_decode(twitter, id, &d);
            }
        } else if (!strcmp(arg, "layout") && !strcmp(type, "layout")) {
            snowmint_layout_config cfg;
            int all_required = 0;
            expressible = layout_config_of(value, &cfg, &all_required) && all_required;
            snowmint_layout *l = NULL;
            r = expressible ? snowmint_layout_new(&cfg, &l) : SNOWMINT_RESULT_OK;
            if (r == SNOWMINT_RESULT_OK && l && !layout_fields_match(l, cJSON_GetObjectItem(c, "fields"), name)) failures++;
            snowmint_layout_free(l);
        } else if (!strcmp(arg, "parse_encoding") && !strcmp(type, "string")) {
            uint32_t enc;
            r = snowmint_encoding_from_name(raw, &enc);
            uint64_t id;
            if (r == SNOWMINT_RESULT_OK) r = snowmint_parse(enc, "1", &id);
        } else {
            expressible = 0;
        }
        if (!expressible || !strcmp(expect, "TYPE") || !strcmp(expect, "HOST")) {
            skipped++;
            continue;
        }
        ran++;
        cJSON *secret = cJSON_GetObjectItem(c, "secret");
        if (secret && r != SNOWMINT_RESULT_OK) {
            /* A password in the input never reaches the error message. */
            char shown[1024] = "";
            snowmint_last_error_message(shown, sizeof shown, NULL);
            if (strstr(shown, secret->valuestring)) {
                failures++;
                fprintf(stderr, "FAIL %s: the secret in the message\n", name);
            }
        }
        if (strcmp(name_of(r), expect) != 0) {
            failures++;
            char msg[512] = "";
            snowmint_last_error_message(msg, sizeof msg, NULL);
            fprintf(stderr, "FAIL %s: expected %s, got %s (%s)\n", name, expect, name_of(r), msg);
        }
    }
    snowmint_layout_free(twitter);
    cJSON_Delete(root);
    free(text);
    printf("host inputs: %d cases run, %d failed, %d not expressible in C\n", ran, failures, skipped);
    return failures || ran < 20 ? 1 : 0;
}
