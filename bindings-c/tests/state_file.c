/*
 * One state file shared by forked processes (SPEC §4a). Usage: state_file [IDS_PER_PROCESS] (default
 * 10^6; the valgrind and ASan runs pass fewer).
 *  - 4 processes x IDS_PER_PROCESS IDs on one file: two use the handle opened before fork() (safe by
 *    construction: no SNOWMINT_RESULT_FORKED), two open the file themselves; no duplicate, each
 *    process's IDs strictly increase.
 *  - SIGKILL mid-minting, then a restart with an injected clock an hour back: no repeat.
 *  - the file unlinked while mapped: detected by the next open and by verify.
 *  - another layout or node ID, a truncated file, random bytes, a directory, a read-only place: each
 *    SNOWMINT_RESULT_STATE_FILE_MISMATCH with a message saying which.
 * Prints "state_file: N passed, M failed".
 *
 * `state_file --mint PATH LAYOUT NODE N OUT` is a worker for the cross-runtime tests (Python and Node
 * processes minting on the same file at the same time): it mints N IDs from the state file at PATH and
 * writes them to OUT as little-endian uint64 (exit status 0 on success); with SNOWMINT_START_AT_MS set it
 * starts minting at that Unix millisecond.
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "snowmint.h"

#define PROCESSES 4
#define HOUR_MS 3600000ULL

static int passed, failed;

static void check(int ok, const char *what) {
    if (ok) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "FAIL: %s\n", what);
    }
}

static int cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static char dir[256];

static const char *in_dir(const char *name) {
    static char buf[4][512];
    static int next;
    char *p = buf[next++ % 4];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

static snowmint_layout *preset(const char *name) {
    snowmint_layout *l = NULL;
    if (snowmint_layout_new_preset(name, &l) != SNOWMINT_RESULT_OK) abort();
    return l;
}

/* Expects SNOWMINT_RESULT_STATE_FILE_MISMATCH with `words` in the message. */
static void expect_mismatch(const char *path, const snowmint_layout *layout, uint64_t node,
                            const char *words, const char *what) {
    snowmint_shared_generator *g = NULL;
    snowmint_result r = snowmint_shared_generator_open_file(path, layout, node, NULL, &g);
    char msg[512] = "";
    snowmint_last_error_message(msg, sizeof msg, NULL);
    int ok = r == SNOWMINT_RESULT_STATE_FILE_MISMATCH && r == 17 && g == NULL && strstr(msg, words);
    if (!ok) fprintf(stderr, "  %s: result %s, message '%s'\n", what, snowmint_result_name(r), msg);
    check(ok, what);
    snowmint_shared_generator_free(g);
}

static void write_file(const char *path, const void *bytes, size_t n) {
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, n, f) != n || fclose(f) != 0) abort();
}

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t hour_back(void *userdata) {
    (void)userdata;
    return now_ms() - HOUR_MS;
}

static void many_processes(size_t per_process) {
    const char *path = in_dir("orders.snowmint");
    snowmint_layout *twitter = preset("twitter");
    snowmint_shared_generator *parent = NULL;
    check(snowmint_shared_generator_open_file(path, twitter, 3, NULL, &parent) == SNOWMINT_RESULT_OK,
          "open before fork");
    size_t bytes = sizeof(uint64_t) * PROCESSES * per_process;
    uint64_t *ids = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (ids == MAP_FAILED) abort();
    pid_t pids[PROCESSES];
    for (int p = 0; p < PROCESSES; p++) {
        pids[p] = fork();
        if (pids[p] == 0) {
            const snowmint_shared_generator *g = parent;
            snowmint_shared_generator *own = NULL;
            if (p >= 2) { /* the other two open the path themselves */
                if (snowmint_shared_generator_open_file(path, twitter, 3, NULL, &own) != SNOWMINT_RESULT_OK)
                    _exit(2);
                g = own;
            }
            uint64_t *mine = ids + (size_t)p * per_process;
            for (size_t i = 0; i < per_process; i++) {
                if (snowmint_shared_next_id(g, &mine[i]) != SNOWMINT_RESULT_OK) _exit(3);
            }
            snowmint_shared_generator_free(own);
            _exit(0);
        }
    }
    int all_ok = 1;
    for (int p = 0; p < PROCESSES; p++) {
        int status = 0;
        waitpid(pids[p], &status, 0);
        all_ok &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    check(all_ok, "4 processes minted (the inherited handle does not raise FORKED)");
    int increasing = 1;
    for (int p = 0; p < PROCESSES; p++)
        for (size_t i = 1; i < per_process; i++)
            increasing &= ids[(size_t)p * per_process + i] > ids[(size_t)p * per_process + i - 1];
    check(increasing, "each process's IDs strictly increase");
    uint64_t last = 0;
    for (size_t i = 0; i < PROCESSES * per_process; i++) last = ids[i] > last ? ids[i] : last;
    qsort(ids, PROCESSES * per_process, sizeof ids[0], cmp);
    size_t dups = 0;
    for (size_t i = 1; i < PROCESSES * per_process; i++) dups += ids[i] == ids[i - 1];
    check(dups == 0, "no duplicate across 4 processes");
    uint64_t next = 0;
    check(snowmint_shared_next_id(parent, &next) == SNOWMINT_RESULT_OK && next > last,
          "the parent continues after every child's IDs");
    check(snowmint_shared_generator_flush(parent) == SNOWMINT_RESULT_OK, "flush");
    check(snowmint_shared_generator_verify(parent) == SNOWMINT_RESULT_OK, "verify");
    munmap(ids, bytes);
    snowmint_shared_generator_free(parent);
    snowmint_layout_free(twitter);
}

static void sigkill_then_hour_back(uint64_t before_kill) {
    const char *path = in_dir("kill.snowmint");
    snowmint_layout *twitter = preset("twitter");
    size_t cap = 1 << 22;
    uint64_t *ids = mmap(NULL, cap * 8 + 64, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (ids == MAP_FAILED) abort();
    _Atomic uint64_t *count = (_Atomic uint64_t *)(ids + cap);
    atomic_store(count, 0);
    pid_t pid = fork();
    if (pid == 0) {
        snowmint_shared_generator *g = NULL;
        if (snowmint_shared_generator_open_file(path, twitter, 3, NULL, &g) != SNOWMINT_RESULT_OK) _exit(2);
        for (uint64_t i = 0;; i++) {
            if (snowmint_shared_next_id(g, &ids[i % cap]) != SNOWMINT_RESULT_OK) _exit(3);
            atomic_store_explicit(count, i + 1, memory_order_release);
        }
    }
    while (atomic_load(count) < before_kill) usleep(1000);
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    check(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "the minter was killed mid-minting");
    uint64_t n = atomic_load(count), max = 0;
    for (uint64_t i = 0; i < n && i < cap; i++) max = ids[i] > max ? ids[i] : max;

    snowmint_options o;
    snowmint_options_default(&o);
    o.clock = hour_back;
    o.policy = SNOWMINT_POLICY_FAIL;
    snowmint_shared_generator *g = NULL;
    check(snowmint_shared_generator_open_file(path, twitter, 3, &o, &g) == SNOWMINT_RESULT_OK, "reopen");
    uint64_t id = 0;
    check(snowmint_shared_next_id(g, &id) == SNOWMINT_RESULT_TOO_FAR_AHEAD,
          "an hour back under fail: TOO_FAR_AHEAD, not a repeat");
    snowmint_shared_generator_free(g);
    o.max_ahead_ns = 2 * HOUR_MS * 1000000ULL;
    g = NULL;
    check(snowmint_shared_generator_open_file(path, twitter, 3, &o, &g) == SNOWMINT_RESULT_OK, "reopen");
    int after = 1;
    for (int i = 0; i < 10000; i++) {
        after &= snowmint_shared_next_id(g, &id) == SNOWMINT_RESULT_OK && id > max;
    }
    check(after, "after SIGKILL and an hour back: every ID after the last one minted");
    snowmint_shared_generator_free(g);
    munmap(ids, cap * 8 + 64);
    snowmint_layout_free(twitter);
}

static void unlinked(void) {
    const char *path = in_dir("unlinked.snowmint");
    snowmint_layout *twitter = preset("twitter");
    snowmint_shared_generator *old = NULL;
    check(snowmint_shared_generator_open_file(path, twitter, 3, NULL, &old) == SNOWMINT_RESULT_OK, "open");
    unlink(path);
    check(snowmint_shared_generator_verify(old) == SNOWMINT_RESULT_STATE_FILE_MISMATCH, "verify sees the unlink");
    expect_mismatch(path, twitter, 3, "maps another file", "the next open sees the unlinked file still mapped");
    snowmint_shared_generator_free(old);
    snowmint_shared_generator *fresh = NULL;
    check(snowmint_shared_generator_open_file(path, twitter, 3, NULL, &fresh) == SNOWMINT_RESULT_OK,
          "with the old mapping gone the path works again");
    snowmint_shared_generator_free(fresh);
    snowmint_layout_free(twitter);
}

static void bad_files(void) {
    snowmint_layout *twitter = preset("twitter"), *discord = preset("discord"), *decimal = preset("decimal");
    const char *good = in_dir("good.snowmint");
    snowmint_shared_generator *g = NULL;
    check(snowmint_shared_generator_open_file(good, twitter, 3, NULL, &g) == SNOWMINT_RESULT_OK, "create");
    snowmint_shared_generator_free(g);
    expect_mismatch(good, twitter, 4, "node ID 3, not 4", "another node ID");
    expect_mismatch(good, discord, 3, "another layout", "another layout");
    expect_mismatch(good, decimal, 3, "another layout", "a decimal layout on a twitter file");
    unsigned char bytes[256];
    FILE *f = fopen(good, "rb");
    if (!f || fread(bytes, 1, 256, f) != 256) abort();
    fclose(f);
    write_file(in_dir("short"), bytes, 100);
    expect_mismatch(in_dir("short"), twitter, 3, "truncated", "a truncated file");
    write_file(in_dir("empty"), bytes, 0);
    expect_mismatch(in_dir("empty"), twitter, 3, "0 bytes long", "an empty file");
    unsigned char noise[256];
    uint64_t x = 0x9E3779B97F4A7C15ULL;
    for (int i = 0; i < 256; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        noise[i] = (unsigned char)x;
    }
    write_file(in_dir("random"), noise, 256);
    expect_mismatch(in_dir("random"), twitter, 3, "not a snowmint state file", "random bytes");
    bytes[33] ^= 1;
    write_file(in_dir("damaged"), bytes, 256);
    expect_mismatch(in_dir("damaged"), twitter, 3, "checksum", "a damaged header");
    expect_mismatch(dir, twitter, 3, "not a regular file", "a directory");
    char ro[512];
    if (geteuid() == 0) {
        snprintf(ro, sizeof ro, "/sys/snowmint-test.state"); /* root may write anywhere but sysfs */
    } else {
        snprintf(ro, sizeof ro, "%s/ro", dir);
        mkdir(ro, 0555);
        strcat(ro, "/s");
    }
    expect_mismatch(ro, twitter, 3, "create failed", "a read-only place");
    /* A decimal (Chronicle) layout on its own file. */
    snowmint_shared_generator *a = NULL, *b = NULL;
    uint64_t x1 = 0, x2 = 0;
    check(snowmint_shared_generator_open_file(in_dir("decimal"), decimal, 28, NULL, &a) == SNOWMINT_RESULT_OK &&
              snowmint_shared_generator_open_file(in_dir("decimal"), decimal, 28, NULL, &b) == SNOWMINT_RESULT_OK &&
              snowmint_shared_next_id(a, &x1) == SNOWMINT_RESULT_OK &&
              snowmint_shared_next_id(b, &x2) == SNOWMINT_RESULT_OK && x2 > x1 && x1 % 100 == 28,
          "decimal layout on a state file");
    snowmint_shared_generator_free(a);
    snowmint_shared_generator_free(b);
    /* flush/verify need a state file; NULL checks. */
    snowmint_shared_generator *mem = NULL;
    snowmint_shared_generator_new(twitter, 3, NULL, &mem);
    check(snowmint_shared_generator_flush(mem) == SNOWMINT_RESULT_INVALID_ARGUMENT, "flush without a file");
    check(snowmint_shared_generator_flush(NULL) == SNOWMINT_RESULT_NULL_POINTER, "flush NULL");
    check(snowmint_shared_generator_open_file(NULL, twitter, 3, NULL, &g) == SNOWMINT_RESULT_NULL_POINTER,
          "open_file NULL path");
    snowmint_shared_generator_free(mem);
    snowmint_layout_free(twitter);
    snowmint_layout_free(discord);
    snowmint_layout_free(decimal);
}

static int mint_worker(char **argv) {
    snowmint_layout *layout = NULL;
    snowmint_shared_generator *g = NULL;
    if (snowmint_layout_new_preset(argv[3], &layout) != SNOWMINT_RESULT_OK) return 2;
    snowmint_result r = snowmint_shared_generator_open_file(argv[2], layout, strtoull(argv[4], NULL, 10), NULL, &g);
    if (r != SNOWMINT_RESULT_OK) {
        char msg[512] = "";
        snowmint_last_error_message(msg, sizeof msg, NULL);
        fprintf(stderr, "state_file --mint: %s: %s\n", snowmint_result_name(r), msg);
        return 3;
    }
    const char *start_at = getenv("SNOWMINT_START_AT_MS"); /* start with the other runtimes' workers */
    while (start_at && now_ms() < strtoull(start_at, NULL, 10)) usleep(1000);
    size_t n = strtoull(argv[5], NULL, 10);
    uint64_t *ids = malloc(n * sizeof *ids + 1);
    if (!ids) return 4;
    for (size_t i = 0; i < n; i++)
        if (snowmint_shared_next_id(g, &ids[i]) != SNOWMINT_RESULT_OK) return 5;
    FILE *f = fopen(argv[6], "wb");
    if (!f || fwrite(ids, sizeof *ids, n, f) != n || fclose(f) != 0) return 6; /* x86-64/aarch64: LE */
    free(ids);
    snowmint_shared_generator_free(g);
    snowmint_layout_free(layout);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 7 && strcmp(argv[1], "--mint") == 0) return mint_worker(argv);
    size_t per_process = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
    snprintf(dir, sizeof dir, "%s/snowmint-c-state-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) return 1;
    many_processes(per_process);
    sigkill_then_hour_back(per_process < 200000 ? per_process : 200000);
    unlinked();
    bad_files();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    printf("state_file: %d passed, %d failed\n", passed, failed);
    return failed != 0;
}
