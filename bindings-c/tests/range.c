/*
 * Range sequences (SPEC §4) from C: two datacenters on the embedded store (and, when test.sh started
 * them, the global row on etcd and a datacenter on PostgreSQL: SNOWMINT_TEST_ETCD_URL,
 * SNOWMINT_TEST_POSTGRES_URL), 4 fork()ed processes minting at once (every value once, increasing per
 * process, below 2^31), next_n, stats, RANGE_EXHAUSTED, bad options and URLs, NULL pointers, and an
 * unreachable store. Prints "range: N passed, M failed"; exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

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

#define PER_CHILD 400
#define CHILDREN 4

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A child: opens the sequence, mints PER_CHILD values into the pipe, exits 0 (1 on any failure). */
static int child(const char *name, const char *dc, const char *global, const char *local, int fd) {
    snowmint_range_options o;
    if (snowmint_range_options_init(&o) != SNOWMINT_RESULT_OK) return 1;
    o.dc_range = 500;
    o.process_range = 20;
    o.wait_ms = 30000; /* the embedded store fsyncs, which can take seconds on a disk busy with builds */
    snowmint_range_sequence *seq = NULL;
    snowmint_result r = snowmint_range_sequence_open(name, dc, global, local, &o, &seq);
    if (r != SNOWMINT_RESULT_OK) {
        char msg[512];
        snowmint_last_error_message(msg, sizeof msg, NULL);
        fprintf(stderr, "child open: %s: %s\n", snowmint_result_name(r), msg);
        return 1;
    }
    uint64_t values[PER_CHILD];
    for (int i = 0; i < PER_CHILD; i++) {
        if (snowmint_range_sequence_next(seq, &values[i]) != SNOWMINT_RESULT_OK) return 1;
    }
    snowmint_range_sequence_free(seq);
    return write(fd, values, sizeof values) == (ssize_t)sizeof values ? 0 : 1;
}

static void two_datacenters(const char *global, const char *local_a, const char *local_b, const char *tag) {
    char name[64];
    snprintf(name, sizeof name, "c-%s-%d", tag, (int)getpid());
    uint64_t all[CHILDREN * PER_CHILD];
    for (int c = 0; c < CHILDREN; c++) {
        int fds[2];
        if (pipe(fds) != 0) { CHECK(0); return; }
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            _exit(child(name, c % 2 ? "b" : "a", global, c % 2 ? local_b : local_a, fds[1]));
        }
        close(fds[1]);
        size_t got = 0;
        uint8_t *p = (uint8_t *)&all[c * PER_CHILD];
        ssize_t n;
        while (got < sizeof(uint64_t) * PER_CHILD && (n = read(fds[0], p + got, sizeof(uint64_t) * PER_CHILD - got)) > 0) got += (size_t)n;
        close(fds[0]);
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        CHECK(got == sizeof(uint64_t) * PER_CHILD);
        for (int i = 1; i < PER_CHILD; i++) CHECK(all[c * PER_CHILD + i] > all[c * PER_CHILD + i - 1]);
    }
    qsort(all, CHILDREN * PER_CHILD, sizeof all[0], cmp_u64);
    int dup = 0, wide = 0;
    for (int i = 0; i < CHILDREN * PER_CHILD; i++) {
        if (i > 0 && all[i] == all[i - 1]) dup++;
        if (all[i] == 0 || all[i] >= (UINT64_C(1) << 31)) wide++;
    }
    CHECK(dup == 0);
    CHECK(wide == 0);
}

int main(void) {
    /* Under $TMPDIR when set (make test's run folder, removed however the run ends), else /tmp. */
    const char *tmp = getenv("TMPDIR");
    char dir[200];
    snprintf(dir, sizeof dir, "%s/snowmint-c-range-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) return 2;
    char global[256], local_b[256];
    snprintf(global, sizeof global, "file://%s/global", dir);
    snprintf(local_b, sizeof local_b, "file://%s/dc-b", dir);
    /* Embedded stores exist only once created (a missing one is STORE_NOT_FOUND). */
    CHECK(mkdir(global + strlen("file://"), 0700) == 0);
    CHECK(mkdir(local_b + strlen("file://"), 0700) == 0);

    two_datacenters(global, global, local_b, "file");
    const char *etcd = getenv("SNOWMINT_TEST_ETCD_URL");
    const char *pg = getenv("SNOWMINT_TEST_POSTGRES_URL");
    if (etcd && *etcd && pg && *pg) two_datacenters(etcd, pg, local_b, "servers");
    else if (getenv("SNOWMINT_REQUIRE_SERVERS")) CHECK(!"server URLs missing");

    /* next_n, stats, defaults. */
    snowmint_range_options o;
    CHECK(snowmint_range_options_init(&o) == SNOWMINT_RESULT_OK);
    CHECK(o.bits == 31 && o.start == 1 && o.threshold_percent == 50 && o.dc_range == 1000000 && o.process_range == 1000);
    o.dc_range = 100;
    o.process_range = 10;
    snowmint_range_sequence *seq = NULL;
    CHECK(snowmint_range_sequence_open("s", "eu", global, NULL, &o, &seq) == SNOWMINT_RESULT_OK);
    uint64_t first = 0, batch[25];
    CHECK(snowmint_range_sequence_next(seq, &first) == SNOWMINT_RESULT_OK);
    CHECK(snowmint_range_sequence_next_n(seq, batch, 25) == SNOWMINT_RESULT_OK);
    for (int i = 0; i < 25; i++) CHECK(batch[i] == first + 1 + (uint64_t)i);
    snowmint_range_stats st;
    CHECK(snowmint_range_sequence_stats(seq, &st) == SNOWMINT_RESULT_OK);
    CHECK(st.values == 26 && st.process_ranges >= 3 && st.dc_ranges >= 1 && st.current_start < st.current_end);
    CHECK(snowmint_range_sequence_next(NULL, &first) == SNOWMINT_RESULT_NULL_POINTER);
    CHECK(snowmint_range_sequence_next(seq, NULL) == SNOWMINT_RESULT_NULL_POINTER);
    CHECK(snowmint_range_sequence_stats(seq, NULL) == SNOWMINT_RESULT_NULL_POINTER);
    snowmint_range_sequence_free(seq);
    snowmint_range_sequence_free(NULL);

    /* Exhaustion: 4 bits from 2 hands out 2..15 once, then RANGE_EXHAUSTED (18). */
    snowmint_range_options_init(&o);
    o.bits = 4;
    o.start = 2;
    o.dc_range = 5;
    o.process_range = 3;
    CHECK(snowmint_range_sequence_open("x", "a", global, NULL, &o, &seq) == SNOWMINT_RESULT_OK);
    uint64_t v = 0, expect = 2;
    snowmint_result r;
    while ((r = snowmint_range_sequence_next(seq, &v)) == SNOWMINT_RESULT_OK) CHECK(v == expect++);
    CHECK(r == SNOWMINT_RESULT_RANGE_EXHAUSTED && r == 18 && expect == 16);
    CHECK(strcmp(snowmint_result_name(18), "RANGE_EXHAUSTED") == 0);
    snowmint_range_sequence_free(seq);

    /* Bad input: INVALID_ARGUMENT, nothing written. */
    struct { uint32_t bits; uint64_t start, dc, proc; uint32_t thr; } bad[] = {
        {0, 1, 100, 10, 50}, {64, 1, 100, 10, 50}, {31, UINT64_C(1) << 31, 100, 10, 50},
        {8, 1, 1000, 10, 50}, {31, 1, 10, 11, 50}, {31, 1, 100, 10, 0}, {31, 1, 0, 0, 50},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snowmint_range_options_init(&o);
        o.bits = bad[i].bits; o.start = bad[i].start; o.dc_range = bad[i].dc; o.process_range = bad[i].proc;
        o.threshold_percent = bad[i].thr;
        seq = (snowmint_range_sequence *)&o; /* must stay untouched */
        CHECK(snowmint_range_sequence_open("n", "a", global, NULL, &o, &seq) == SNOWMINT_RESULT_INVALID_ARGUMENT);
        CHECK(seq == (snowmint_range_sequence *)&o);
    }
    const char *urls[] = {"etcd://", "postgres://host/db", "redis://x", "file://relative"};
    for (size_t i = 0; i < 4; i++) {
        CHECK(snowmint_range_sequence_open("n", "a", urls[i], NULL, NULL, &seq) == SNOWMINT_RESULT_INVALID_ARGUMENT);
        CHECK(snowmint_range_sequence_open("n", "a", global, urls[i], NULL, &seq) == SNOWMINT_RESULT_INVALID_ARGUMENT);
    }
    CHECK(snowmint_range_sequence_open("a/b", "a", global, NULL, NULL, &seq) == SNOWMINT_RESULT_INVALID_ARGUMENT);
    CHECK(snowmint_range_sequence_open("n", "a@b", global, NULL, NULL, &seq) == SNOWMINT_RESULT_INVALID_ARGUMENT);
    CHECK(snowmint_range_sequence_open(NULL, "a", global, NULL, NULL, &seq) == SNOWMINT_RESULT_NULL_POINTER);
    CHECK(snowmint_range_sequence_open("n", "a", global, NULL, NULL, NULL) == SNOWMINT_RESULT_NULL_POINTER);
    CHECK(snowmint_range_options_init(NULL) == SNOWMINT_RESULT_NULL_POINTER);
    /* A store nobody listens on: STORE_UNAVAILABLE, with a message naming it. */
    CHECK(snowmint_range_sequence_open("n", "a", global, "etcd://127.0.0.1:9/x", NULL, &seq) == SNOWMINT_RESULT_STORE_UNAVAILABLE);
    char msg[512];
    snowmint_last_error_message(msg, sizeof msg, NULL);
    CHECK(strstr(msg, "127.0.0.1:9") != NULL);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    printf("range: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
