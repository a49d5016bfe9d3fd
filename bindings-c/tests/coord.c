/*
 * Node sources, leases and sequencers from C, on the embedded store and (when test.sh started them)
 * real etcd and PostgreSQL servers (SNOWMINT_TEST_ETCD_URL, SNOWMINT_TEST_POSTGRES_URL):
 *  - sources: fixed, env, bad sources and unreachable stores give the same codes as Rust (and free
 *    everything: valgrind / ASan see every failed path);
 *  - lease info, state, detach/attach;
 *  - one lease per host: forked processes on one state file share a sequencer's only node ID;
 *  - the sequencer lifecycle: create, conflict, exhausted, destroy seen from another process
 *    (fork), re-create never repeats an ID;
 *  - pause: a fork()ed holder is SIGSTOPped past the TTL while another process takes its node ID;
 *    resumed, it stops with LEASE_LOST, and no ID of the two is the same.
 * Prints "coord: N passed, M failed"; exits non-zero on any failure.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
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

#define CHECK_RC(call, want) CHECK_RC_((call), (want), #call, __LINE__)
static void CHECK_RC_(snowmint_result got, snowmint_result want, const char *what, int line) {
    if (got == want) {
        passed++;
    } else {
        char msg[512];
        snowmint_last_error_message(msg, sizeof msg, NULL);
        failed++;
        fprintf(stderr, "FAIL line %d %s: expected %s, got %s (%s)\n", line, what,
                snowmint_result_name(want), snowmint_result_name(got), msg);
    }
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static snowmint_layout *twitter(void) {
    snowmint_layout *l = NULL;
    if (snowmint_layout_new_from_preset(SNOWMINT_PRESET_TWITTER, &l) != SNOWMINT_RESULT_OK) abort();
    return l;
}

static char tmpdir[256];
static const char *self_path;
static unsigned uniq;

/* "BASE?sequencer=NAME-PID-N&ttl=TTL" (or &… when BASE has a query already), the sequencer created
 * first with layout `l` and 1024 node IDs (only `default` is created on first use; a missing name is
 * SEQUENCER_NOT_FOUND, checked here too). */
static void source_for(char *out, size_t cap, const char *base, const char *name, const char *ttl,
                       const snowmint_layout *l) {
    char seq_name[128];
    snprintf(seq_name, sizeof seq_name, "%s-%d-%u", name, (int)getpid(), uniq++);
    const char *sep = strchr(base, '?') ? "&" : "?";
    snprintf(out, cap, "%s%ssequencer=%s-missing&ttl=%s", base, sep, seq_name, ttl);
    snowmint_shared_generator *g = NULL;
    if (strncmp(base, "file://", 7) == 0 && !strchr(base, '?')) {
        /* A store path that does not exist is refused (STORE_NOT_FOUND), and nothing is created. */
        char missing[400];
        snprintf(missing, sizeof missing, "%s/nonexistent/x?sequencer=%s", base, seq_name);
        CHECK_RC(snowmint_generator_open(missing, l, NULL, &g), SNOWMINT_RESULT_STORE_NOT_FOUND);
        struct stat st;
        snprintf(missing, sizeof missing, "%s/nonexistent", base + 7);
        CHECK(stat(base + 7, &st) == 0 && stat(missing, &st) != 0);
    }
    CHECK_RC(snowmint_generator_open(out, l, NULL, &g), SNOWMINT_RESULT_SEQUENCER_NOT_FOUND);
    snowmint_sequencer *seq = NULL;
    CHECK_RC(snowmint_sequencer_create(base, seq_name, l, 1024, &seq), SNOWMINT_RESULT_OK);
    snowmint_sequencer_free(seq);
    snprintf(out, cap, "%s%ssequencer=%s&ttl=%s", base, sep, seq_name, ttl);
}

static void test_sources(const snowmint_layout *l) {
    snowmint_shared_generator *g = NULL;
    uint64_t id = 0, node = 0;
    snowmint_lease_state st = SNOWMINT_LEASE_STATE_DESTROYED;
    snowmint_lease_info info;

    CHECK_RC(snowmint_generator_open("7", l, NULL, &g), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_shared_generator_node_id(g, &node), SNOWMINT_RESULT_OK);
    CHECK(node == 7);
    CHECK_RC(snowmint_shared_next_id(g, &id), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_generator_lease_state(g, &st), SNOWMINT_RESULT_OK);
    CHECK(st == SNOWMINT_LEASE_STATE_ATTACHED);
    CHECK_RC(snowmint_generator_lease_info(g, &info), SNOWMINT_RESULT_INVALID_ARGUMENT);
    CHECK_RC(snowmint_generator_detach(g), SNOWMINT_RESULT_OK);
    snowmint_shared_generator_free(g);

    setenv("SNOWMINT_NODE_ID", "12", 1);
    g = NULL;
    CHECK_RC(snowmint_generator_open("env", l, NULL, &g), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_shared_generator_node_id(g, &node), SNOWMINT_RESULT_OK);
    CHECK(node == 12);
    snowmint_shared_generator_free(g);
    setenv("SNOWMINT_NODE_ID", "4096", 1);

    static const struct {
        const char *source;
        snowmint_result want;
    } bad[] = {
        {"", SNOWMINT_RESULT_INVALID_ARGUMENT},
        {"env", SNOWMINT_RESULT_NODE_ID_OUT_OF_RANGE},
        {"4096", SNOWMINT_RESULT_NODE_ID_OUT_OF_RANGE},
        {"zookeeper://h:2181/x", SNOWMINT_RESULT_INVALID_ARGUMENT},
        {"file://relative", SNOWMINT_RESULT_INVALID_ARGUMENT},
        {"file:///tmp/x?ttl=0s", SNOWMINT_RESULT_INVALID_ARGUMENT},
        {"file:///tmp/x?sequencer=.bad", SNOWMINT_RESULT_INVALID_ARGUMENT},
        {"etcd://127.0.0.1:1/x?ttl=1s", SNOWMINT_RESULT_STORE_UNAVAILABLE},
        {"postgres://u@127.0.0.1:1/db?ttl=1s", SNOWMINT_RESULT_STORE_UNAVAILABLE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        g = (snowmint_shared_generator *)&g; /* must stay untouched */
        snowmint_shared_generator *before = g;
        CHECK_RC(snowmint_generator_open(bad[i].source, l, NULL, &g), bad[i].want);
        CHECK(g == before);
    }
    unsetenv("SNOWMINT_NODE_ID");
    g = NULL;
    CHECK_RC(snowmint_generator_open(NULL, l, NULL, &g), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_generator_open("7", NULL, NULL, &g), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_generator_open("7", l, NULL, NULL), SNOWMINT_RESULT_NULL_POINTER);
    CHECK_RC(snowmint_generator_open("\xff", l, NULL, &g), SNOWMINT_RESULT_INVALID_ARGUMENT);
}

static void test_lease(const snowmint_layout *l, const char *base) {
    char src[512];
    source_for(src, sizeof src, base, "c-lease", "2s", l);
    snowmint_shared_generator *g = NULL;
    CHECK_RC(snowmint_generator_open(src, l, NULL, &g), SNOWMINT_RESULT_OK);
    if (!g) return;
    snowmint_lease_info info = {0, 0, 0};
    CHECK_RC(snowmint_generator_lease_info(g, &info), SNOWMINT_RESULT_OK);
    uint64_t node = 99999;
    CHECK_RC(snowmint_shared_generator_node_id(g, &node), SNOWMINT_RESULT_OK);
    CHECK(info.node_id == node && info.fencing_token >= 1);
    CHECK(info.expires_unix_ms > (uint64_t)time(NULL) * 1000 - 2000);
    uint64_t ids[1000], last = 0;
    CHECK_RC(snowmint_shared_next_ids(g, ids, 1000), SNOWMINT_RESULT_OK);
    int ordered = 1;
    for (int i = 1; i < 1000; i++) ordered &= ids[i] > ids[i - 1];
    CHECK(ordered);
    CHECK_RC(snowmint_shared_next_id(g, &last), SNOWMINT_RESULT_OK);
    CHECK(last > ids[999]);
    uint64_t st = 0;
    CHECK_RC(snowmint_shared_generator_state(g, &st), SNOWMINT_RESULT_INVALID_ARGUMENT);
    CHECK_RC(snowmint_generator_detach(g), SNOWMINT_RESULT_OK);
    snowmint_lease_state s = SNOWMINT_LEASE_STATE_ATTACHED;
    CHECK_RC(snowmint_generator_lease_state(g, &s), SNOWMINT_RESULT_OK);
    CHECK(s == SNOWMINT_LEASE_STATE_DETACHED);
    uint64_t id = 0;
    CHECK_RC(snowmint_shared_next_id(g, &id), SNOWMINT_RESULT_LEASE_LOST);
    CHECK_RC(snowmint_shared_next_ids(g, ids, 10), SNOWMINT_RESULT_LEASE_LOST);
    CHECK_RC(snowmint_generator_lease_info(g, &info), SNOWMINT_RESULT_LEASE_LOST);
    CHECK_RC(snowmint_generator_attach(g), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_shared_next_id(g, &id), SNOWMINT_RESULT_OK);
    CHECK(id > last);
    snowmint_shared_generator_free(g);
}

/* One lease per host: a sequencer of ONE node ID, held through a state file by this process; 3 forked
 * children open the same source with the same state file and mint under that node ID at once (without
 * the file each would need a node ID of its own: NODE_IDS_EXHAUSTED); no ID twice; after the last
 * handle is freed the node ID is free again. */
static void test_shared(const snowmint_layout *l, const char *base) {
    char store[512], name[64], src[640], state[400];
    snprintf(store, sizeof store, "%s%sttl=2s", base, strchr(base, '?') ? "&" : "?");
    snprintf(name, sizeof name, "c-shared-%d-%u", (int)getpid(), uniq++);
    snowmint_sequencer *seq = NULL;
    CHECK_RC(snowmint_sequencer_create(store, name, l, 1, &seq), SNOWMINT_RESULT_OK);
    snowmint_sequencer_free(seq);
    snprintf(src, sizeof src, "%s&sequencer=%s", store, name);
    snprintf(state, sizeof state, "%s/%s.state", tmpdir, name);
    snowmint_shared_generator *g = NULL, *other = NULL;
    CHECK_RC(snowmint_generator_open_shared(src, state, l, NULL, &g), SNOWMINT_RESULT_OK);
    if (!g) return;
    CHECK_RC(snowmint_generator_open(src, l, NULL, &other), SNOWMINT_RESULT_NODE_IDS_EXHAUSTED);
    uint64_t node = 9999;
    CHECK_RC(snowmint_shared_generator_node_id(g, &node), SNOWMINT_RESULT_OK);
    enum { KIDS = 3, PER = 3000 };
    int fds[KIDS][2];
    pid_t pids[KIDS];
    for (int k = 0; k < KIDS; k++) {
        if (pipe(fds[k]) != 0) abort();
        pids[k] = fork();
        if (pids[k] == 0) {
            close(fds[k][0]);
            snowmint_shared_generator *c = NULL;
            if (snowmint_generator_open_shared(src, state, l, NULL, &c) != SNOWMINT_RESULT_OK) _exit(3);
            uint64_t ids[PER];
            for (int i = 0; i < PER; i++) {
                if (snowmint_shared_next_id(c, &ids[i]) != SNOWMINT_RESULT_OK) _exit(4);
            }
            if (write(fds[k][1], ids, sizeof ids) != (ssize_t)sizeof ids) _exit(5);
            snowmint_shared_generator_free(c);
            /* Ends without an exit, as test_fork's child does: its heap holds the parent's generator
             * and keeper thread, which do not exist here, so valgrind's leak check at any exit would
             * report what the parent still owns. A failure above exits 3 to 5 instead. */
            kill(getpid(), SIGKILL);
            _exit(6);
        }
        close(fds[k][1]);
    }
    static uint64_t all[KIDS * PER + 1];
    size_t n = 0;
    for (int k = 0; k < KIDS; k++) {
        size_t got = 0;
        ssize_t r;
        while (got < sizeof(uint64_t) * PER &&
               (r = read(fds[k][0], (char *)&all[n] + got, sizeof(uint64_t) * PER - got)) > 0)
            got += (size_t)r;
        close(fds[k][0]);
        int status = 0;
        waitpid(pids[k], &status, 0);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        CHECK(got == sizeof(uint64_t) * PER);
        n += got / sizeof(uint64_t);
    }
    CHECK_RC(snowmint_shared_next_id(g, &all[n]), SNOWMINT_RESULT_OK);
    n++;
    int same_node = 1, unique = 1;
    for (size_t i = 0; i < n; i++) {
        snowmint_decoded d;
        if (snowmint_decode(l, all[i], &d) != SNOWMINT_RESULT_OK || d.node != node) same_node = 0;
        for (size_t j = 0; j < i && unique; j++) unique &= all[i] != all[j];
    }
    CHECK(n == KIDS * PER + 1);
    CHECK(same_node);
    CHECK(unique);
    snowmint_shared_generator_free(g);
    /* Released by the last handle: the one node ID is free again. */
    CHECK_RC(snowmint_generator_open(src, l, NULL, &other), SNOWMINT_RESULT_OK);
    snowmint_shared_generator_free(other);
}

static void test_lifecycle(const snowmint_layout *l, const char *base) {
    char store[512], name[64];
    snprintf(store, sizeof store, "%s%sttl=1s", base, strchr(base, '?') ? "&" : "?");
    snprintf(name, sizeof name, "c-life-%d-%u", (int)getpid(), uniq++);
    snowmint_sequencer *seq = NULL, *same = NULL, *other = NULL;
    CHECK_RC(snowmint_sequencer_create(store, name, l, 2, &seq), SNOWMINT_RESULT_OK);
    if (!seq) return;
    CHECK_RC(snowmint_sequencer_create(store, name, l, 2, &same), SNOWMINT_RESULT_OK);
    snowmint_sequencer_free(same);
    CHECK_RC(snowmint_sequencer_create(store, name, l, 3, &other), SNOWMINT_RESULT_SEQUENCER_CONFLICT);
    CHECK(other == NULL);
    CHECK_RC(snowmint_sequencer_create(store, ".bad", l, 2, &other), SNOWMINT_RESULT_INVALID_ARGUMENT);
    CHECK_RC(snowmint_sequencer_create(store, "n0", l, 5000, &other), SNOWMINT_RESULT_INVALID_ARGUMENT);
    CHECK_RC(snowmint_sequencer_open(store, "no-such-sequencer", &other), SNOWMINT_RESULT_SEQUENCER_NOT_FOUND);
    CHECK_RC(snowmint_sequencer_create("7", name, l, 2, &other), SNOWMINT_RESULT_INVALID_ARGUMENT);

    snowmint_shared_generator *a = NULL, *b = NULL, *c = NULL;
    CHECK_RC(snowmint_sequencer_attach(seq, &a), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_sequencer_attach(seq, &b), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_sequencer_attach(seq, &c), SNOWMINT_RESULT_NODE_IDS_EXHAUSTED);
    CHECK(c == NULL);
    uint64_t na = 9, nb = 9, id = 0, last = 0;
    snowmint_shared_generator_node_id(a, &na);
    snowmint_shared_generator_node_id(b, &nb);
    CHECK(na != nb && na < 2 && nb < 2);
    CHECK_RC(snowmint_sequencer_detach(b), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_shared_next_id(b, &id), SNOWMINT_RESULT_LEASE_LOST);
    CHECK_RC(snowmint_generator_attach(b), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_shared_next_id(a, &last), SNOWMINT_RESULT_OK);

    /* Destroyed by another process. */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* A fresh process (this program again: valgrind follows it with --trace-children=yes). */
        execl(self_path, self_path, "destroy", store, name, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    snowmint_lease_state st = SNOWMINT_LEASE_STATE_ATTACHED;
    double deadline = now_s() + 10;
    while (now_s() < deadline) {
        snowmint_generator_lease_state(a, &st);
        if (st == SNOWMINT_LEASE_STATE_DESTROYED) break;
        sleep_ms(20);
    }
    CHECK(st == SNOWMINT_LEASE_STATE_DESTROYED);
    CHECK_RC(snowmint_shared_next_id(a, &id), SNOWMINT_RESULT_SEQUENCER_DESTROYED);
    CHECK_RC(snowmint_generator_attach(a), SNOWMINT_RESULT_SEQUENCER_DESTROYED);
    snowmint_shared_generator_free(a);
    snowmint_shared_generator_free(b);
    snowmint_sequencer_free(seq);

    /* Re-created: never repeats an ID. */
    seq = NULL;
    CHECK_RC(snowmint_sequencer_create(store, name, l, 2, &seq), SNOWMINT_RESULT_OK);
    a = NULL;
    CHECK_RC(snowmint_sequencer_attach(seq, &a), SNOWMINT_RESULT_OK);
    CHECK_RC(snowmint_shared_next_id(a, &id), SNOWMINT_RESULT_OK);
    CHECK(id > last);
    CHECK_RC(snowmint_sequencer_destroy(seq), SNOWMINT_RESULT_OK);
    snowmint_shared_generator_free(a);
    snowmint_sequencer_free(seq);
}

/* Reads the forked child `pid`'s answer (n bytes) from `fd`, waiting at most 60 s: a child that hangs is
 * killed and the read fails (a failed check, never a test run that hangs). */
static int read_child(int fd, void *buf, size_t n, pid_t pid) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, 60000) != 1) {
        fprintf(stderr, "coord: forked child %d gave no answer in 60 s: killed\n", (int)pid);
        kill(pid, SIGKILL);
        return 0;
    }
    return read(fd, buf, n) == (ssize_t)n;
}

/* Pre-fork workers: a generator opened from a lease source before fork() opens a lease of its own in the
 * child on first use (another node ID, no FORKED); the parent's lease goes on. */
static void test_fork(const snowmint_layout *l, const char *base) {
    char src[512];
    source_for(src, sizeof src, base, "c-fork", "2s", l);
    snowmint_shared_generator *g = NULL;
    CHECK_RC(snowmint_generator_open(src, l, NULL, &g), SNOWMINT_RESULT_OK);
    if (!g) return;
    uint64_t parent_node = 9999, before = 0, after = 0;
    snowmint_shared_generator_node_id(g, &parent_node);
    CHECK_RC(snowmint_shared_next_id(g, &before), SNOWMINT_RESULT_OK);
    int fds[2];
    if (pipe(fds) != 0) abort();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        uint64_t ids[2] = {0, 0}, node = 9999;
        snowmint_result r1 = snowmint_shared_next_id(g, &ids[0]);
        snowmint_result r2 = snowmint_shared_next_id(g, &ids[1]);
        snowmint_shared_generator_node_id(g, &node);
        uint64_t answer[4] = {(uint64_t)r1 | ((uint64_t)r2 << 32), ids[0], ids[1], node};
        if (write(fds[1], answer, sizeof answer) != sizeof answer) _exit(3);
        snowmint_generator_detach(g); /* the child's own lease */
        /* Ends without an exit: the child's heap holds the parent's keeper thread, which does not
         * exist here, so valgrind's leak check at any exit (even _exit) would report what the parent
         * still owns. Its answer is in the pipe; a crash would end it by another signal. */
        kill(getpid(), SIGKILL);
        _exit(4);
    }
    close(fds[1]);
    uint64_t answer[4] = {~0ull, 0, 0, 0};
    CHECK(read_child(fds[0], answer, sizeof answer, pid));
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK(answer[0] == 0); /* both mints SNOWMINT_RESULT_OK, not FORKED */
    CHECK(answer[3] != parent_node && ((answer[1] >> 12) & 0x3ff) == answer[3]);
    CHECK(answer[2] > answer[1]);
    CHECK_RC(snowmint_shared_next_id(g, &after), SNOWMINT_RESULT_OK);
    CHECK(after > before && ((after >> 12) & 0x3ff) == parent_node);
    snowmint_shared_generator_free(g);
}

/* Issue 40: the child's FIRST call is a batch (or the stats, then a batch), the parent idle (it gave its
 * lease back before the fork, having minted nothing: a pre-fork master) or having minted; with and without
 * a state file. The child claims its own lease (or joins the host's) and mints; no LEASE_LOST. */
static void test_fork_batch_first(const snowmint_layout *l, const char *base) {
    for (int variant = 0; variant < 8; variant++) {
        int parent_mints = variant & 1, shared = (variant >> 1) & 1, stats_first = (variant >> 2) & 1;
        char src[512], state[400];
        source_for(src, sizeof src, base, "c-fork-batch", "2s", l);
        snprintf(state, sizeof state, "%s/fork-batch-%d-%u.lease", tmpdir, variant, uniq++);
        snowmint_shared_generator *g = NULL;
        if (shared) CHECK_RC(snowmint_generator_open_shared(src, state, l, NULL, &g), SNOWMINT_RESULT_OK);
        else CHECK_RC(snowmint_generator_open(src, l, NULL, &g), SNOWMINT_RESULT_OK);
        if (!g) return;
        uint64_t before = 0;
        if (parent_mints) CHECK_RC(snowmint_shared_next_id(g, &before), SNOWMINT_RESULT_OK);
        int fds[2];
        if (pipe(fds) != 0) abort();
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            uint64_t answer[8] = {0};
            snowmint_stats st;
            memset(&st, 0xff, sizeof st);
            snowmint_result r0 = SNOWMINT_RESULT_OK;
            if (stats_first) {
                r0 = snowmint_shared_generator_stats(g, &st);
                answer[7] = st.minted; /* the child's own: nothing yet */
            }
            snowmint_result r1 = snowmint_shared_next_ids(g, &answer[2], 3);
            uint64_t node = 9999;
            snowmint_shared_generator_node_id(g, &node);
            snowmint_result r2 = snowmint_shared_generator_stats(g, &st);
            answer[0] = (uint64_t)r0 | ((uint64_t)r1 << 16) | ((uint64_t)r2 << 32);
            answer[1] = node;
            answer[5] = st.minted;
            answer[6] = st.batches;
            if (write(fds[1], answer, sizeof answer) != sizeof answer) _exit(3);
            snowmint_generator_detach(g);
            kill(getpid(), SIGKILL); /* as test_fork's child: see there */
            _exit(4);
        }
        close(fds[1]);
        uint64_t answer[8] = {~0ull, 0, 0, 0, 0, 0, 0, 0};
        CHECK(read_child(fds[0], answer, sizeof answer, pid));
        close(fds[0]);
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        if (answer[0] != 0) {
            fprintf(stderr, "fork batch-first variant %d on %s: results %#llx\n", variant, base,
                    (unsigned long long)answer[0]);
        }
        CHECK(answer[0] == 0); /* stats, the batch and the stats after it: OK, not LEASE_LOST */
        CHECK(answer[2] < answer[3] && answer[3] < answer[4]);
        for (int k = 2; k < 5; k++) CHECK(((answer[k] >> 12) & 0x3ff) == answer[1]);
        CHECK(answer[5] == 3 && answer[6] == 1);  /* the child's stats: its batch only */
        if (stats_first) CHECK(answer[7] == 0);
        uint64_t after = 0, ids[3];
        CHECK_RC(snowmint_shared_next_ids(g, ids, 3), SNOWMINT_RESULT_OK);
        CHECK_RC(snowmint_shared_next_id(g, &after), SNOWMINT_RESULT_OK);
        CHECK(after > before);
        snowmint_shared_generator_free(g);
    }
}

/* Mints batches into `fd` until an error or `seconds`; writes the final result code last. */
static int holder(const char *store, const char *name, int fd, int ready, double seconds) {
    snowmint_sequencer *seq = NULL;
    snowmint_shared_generator *g = NULL;
    snowmint_result r = snowmint_sequencer_open(store, name, &seq);
    double deadline = now_s() + 20;
    /* Retried while the only node ID is held (by a paused holder whose claim has not expired yet). */
    for (int first = 1; r == SNOWMINT_RESULT_OK || (r == SNOWMINT_RESULT_NODE_IDS_EXHAUSTED && now_s() < deadline); first = 0) {
        if (!first) sleep_ms(50);
        r = snowmint_sequencer_attach(seq, &g);
        if (r == SNOWMINT_RESULT_OK) break;
    }
    uint64_t node = r == SNOWMINT_RESULT_OK ? 0 : UINT64_MAX;
    if (g) snowmint_shared_generator_node_id(g, &node);
    if (r != SNOWMINT_RESULT_OK) {
        char msg[512];
        snowmint_last_error_message(msg, sizeof msg, NULL);
        fprintf(stderr, "holder %d after %.1fs: %s: %s\n", (int)getpid(), now_s() - deadline + 20,
                snowmint_result_name(r), msg);
    }
    if (write(ready, &node, sizeof node) != sizeof node) return 3;
    close(ready);
    double stop = now_s() + seconds;
    uint64_t ids[100];
    while (r == SNOWMINT_RESULT_OK && now_s() < stop) {
        r = snowmint_shared_next_ids(g, ids, 100);
        if (r == SNOWMINT_RESULT_OK && write(fd, ids, sizeof ids) != sizeof ids) return 3;
        sleep_ms(2);
    }
    uint64_t end[2] = {UINT64_MAX, (uint64_t)r};
    if (write(fd, end, sizeof end) != sizeof end) return 3;
    snowmint_shared_generator_free(g);
    snowmint_sequencer_free(seq);
    return 0;
}

static uint64_t *read_ids(const char *path, size_t *n, uint64_t *result) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint64_t *buf = malloc(size > 0 ? (size_t)size : 8);
    size_t got = fread(buf, 8, (size_t)size / 8, f);
    fclose(f);
    *result = UINT64_MAX;
    if (got >= 2 && buf[got - 2] == UINT64_MAX) {
        *result = buf[got - 1];
        got -= 2;
    }
    *n = got;
    return buf;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static pid_t spawn_holder(const char *store, const char *name, const char *path, double seconds,
                          uint64_t *node) {
    int p[2];
    if (pipe(p) != 0) abort();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        /* fork() + exec of this program: the holder is a process of its own, checked by valgrind too. */
        char fd[16], secs[32];
        close(p[0]);
        snprintf(fd, sizeof fd, "%d", p[1]);
        snprintf(secs, sizeof secs, "%.1f", seconds);
        execl(self_path, self_path, "holder", store, name, path, secs, fd, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    if (read(p[0], node, sizeof *node) != sizeof *node) *node = UINT64_MAX;
    close(p[0]);
    return pid;
}

static void test_pause(const snowmint_layout *l, const char *base) {
    char store[512], name[64], pa[400], pb[400];
    /* A 2 s TTL: the store's answer timeout follows the TTL; a loaded machine must not fail renewals. */
    snprintf(store, sizeof store, "%s%sttl=2s", base, strchr(base, '?') ? "&" : "?");
    snprintf(name, sizeof name, "c-pause-%d-%u", (int)getpid(), uniq++);
    snprintf(pa, sizeof pa, "%s/a-%s.bin", tmpdir, name);
    snprintf(pb, sizeof pb, "%s/b-%s.bin", tmpdir, name);
    snowmint_sequencer *seq = NULL;
    /* One node ID: the second holder can only take it once the first one's claim has expired. */
    CHECK_RC(snowmint_sequencer_create(store, name, l, 1, &seq), SNOWMINT_RESULT_OK);
    if (!seq) return;
    uint64_t node_a = 0, node_b = 0;
    pid_t a = spawn_holder(store, name, pa, 10.0, &node_a);
    CHECK(node_a == 0);
    sleep_ms(300);
    kill(a, SIGSTOP);
    pid_t b = spawn_holder(store, name, pb, 2.5, &node_b);
    CHECK(node_b == 0); /* took the paused holder's node ID after its TTL */
    kill(a, SIGCONT);
    int sa = 0, sb = 0;
    waitpid(a, &sa, 0);
    waitpid(b, &sb, 0);
    CHECK(WIFEXITED(sa) && WEXITSTATUS(sa) == 0);
    CHECK(WIFEXITED(sb) && WEXITSTATUS(sb) == 0);
    size_t na = 0, nb = 0;
    uint64_t ra = 0, rb = 0;
    uint64_t *ia = read_ids(pa, &na, &ra), *ib = read_ids(pb, &nb, &rb);
    CHECK(ia && ib && na > 0 && nb > 0);
    /* The resumed holder stopped with LEASE_LOST; the new one ran until its time was up. */
    CHECK(ra == SNOWMINT_RESULT_LEASE_LOST);
    CHECK(rb == SNOWMINT_RESULT_OK);
    if (ia && ib) {
        uint64_t *all = malloc((na + nb) * 8);
        memcpy(all, ia, na * 8);
        memcpy(all + na, ib, nb * 8);
        qsort(all, na + nb, 8, cmp_u64);
        size_t dups = 0;
        for (size_t i = 1; i < na + nb; i++) dups += all[i] == all[i - 1];
        CHECK(dups == 0);
        if (dups) fprintf(stderr, "pause: %zu duplicate IDs among %zu + %zu\n", dups, na, nb);
        free(all);
    }
    free(ia);
    free(ib);
    remove(pa);
    remove(pb);
    snowmint_sequencer_destroy(seq);
    snowmint_sequencer_free(seq);
}

/* TLS and authentication: the failure cases scripts/servers.sh wrote for every runtime (tls_servers,
 * SNOWMINT_TEST_TLS_FAILURES: name, source, code, a text the message holds, a text it must not hold);
 * then the three servers with the right settings mint. */
static void test_tls(const snowmint_layout *l, const char *path) {
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f) return;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *field[5];
        char *rest = line;
        int n = 0;
        for (; n < 5 && rest; n++) {
            field[n] = rest;
            rest = strchr(rest, '\t');
            if (rest) *rest++ = 0;
        }
        if (n != 5) continue;
        snowmint_shared_generator *g = NULL;
        snowmint_result r = snowmint_generator_open(field[1], l, NULL, &g);
        snowmint_shared_generator_free(g);
        char msg[2048] = "";
        snowmint_last_error_message(msg, sizeof msg, NULL);
        if (strcmp(snowmint_result_name(r), field[2]) != 0 || !strstr(msg, field[3]) || strstr(msg, field[4])) {
            failed++;
            fprintf(stderr, "FAIL %s: %s (%s); expected %s naming \"%s\" without the password\n", field[0],
                    snowmint_result_name(r), msg, field[2], field[3]);
        } else {
            passed++;
        }
    }
    fclose(f);
    const char *urls[3] = {getenv("SNOWMINT_TEST_ETCD_TLS_URL"), getenv("SNOWMINT_TEST_ETCD_AUTH_URL"),
                           getenv("SNOWMINT_TEST_POSTGRES_TLS_URL")};
    for (int i = 0; i < 3; i++) {
        CHECK(urls[i] != NULL);
        if (!urls[i]) continue;
        char src[2048];
        snprintf(src, sizeof src, "%s%sttl=3s", urls[i], strchr(urls[i], '?') ? "&" : "?");
        snowmint_shared_generator *g = NULL;
        CHECK_RC(snowmint_generator_open(src, l, NULL, &g), SNOWMINT_RESULT_OK);
        uint64_t id = 0;
        if (g) CHECK_RC(snowmint_shared_next_id(g, &id), SNOWMINT_RESULT_OK);
        CHECK(id > 0);
        snowmint_shared_generator_free(g);
    }
}

int main(int argc, char **argv) {
    self_path = argv[0];
    if (argc == 7 && strcmp(argv[1], "holder") == 0) {
        FILE *f = fopen(argv[4], "wb");
        if (!f) return 2;
        int rc = holder(argv[2], argv[3], fileno(f), atoi(argv[6]), atof(argv[5]));
        fclose(f);
        return rc;
    }
    if (argc == 4 && strcmp(argv[1], "destroy") == 0) {
        snowmint_sequencer *s = NULL;
        int ok = snowmint_sequencer_open(argv[2], argv[3], &s) == SNOWMINT_RESULT_OK &&
                 snowmint_sequencer_destroy(s) == SNOWMINT_RESULT_OK;
        snowmint_sequencer_free(s);
        return ok ? 0 : 1;
    }
    snprintf(tmpdir, sizeof tmpdir, "/tmp/snowmint-c-coord-XXXXXX");
    if (!mkdtemp(tmpdir)) return 2;
    char file_store[300];
    snprintf(file_store, sizeof file_store, "file://%s/store", tmpdir);
    if (mkdir(file_store + 7, 0700) != 0) return 2; /* a store path that does not exist is refused */
    const char *bases[3] = {file_store, getenv("SNOWMINT_TEST_ETCD_URL"),
                            getenv("SNOWMINT_TEST_POSTGRES_URL")};
    if (getenv("SNOWMINT_REQUIRE_SERVERS") && (!bases[1] || !bases[2])) {
        fprintf(stderr, "coord: SNOWMINT_REQUIRE_SERVERS is set but a server URL is missing\n");
        return 1;
    }
    const char *tls_failures = getenv("SNOWMINT_TEST_TLS_FAILURES");
    if (getenv("SNOWMINT_REQUIRE_SERVERS") && !tls_failures) {
        fprintf(stderr, "coord: SNOWMINT_REQUIRE_SERVERS is set but SNOWMINT_TEST_TLS_FAILURES is missing\n");
        return 1;
    }
    snowmint_layout *l = twitter();
    test_sources(l);
    if (tls_failures) test_tls(l, tls_failures);
    for (int i = 0; i < 3; i++) {
        if (!bases[i] || !*bases[i]) continue;
        test_lease(l, bases[i]);
        test_shared(l, bases[i]);
        test_lifecycle(l, bases[i]);
#if defined(__SANITIZE_ADDRESS__)
        /* Not under ASan: gcc 12's ASan allocator is not fork-safe (a child forked while another thread
         * of the parent, a keeper, holds the allocator's lock waits on it for ever). The fork tests run in
         * the static, shared and valgrind builds. */
        (void)test_fork;
        (void)test_fork_batch_first;
#else
        test_fork(l, bases[i]);
        test_fork_batch_first(l, bases[i]);
#endif
    }
    /* The pause test on every store (an embedded claim expires at its TTL too, the holder alive). */
    for (int i = 0; i < 3; i++) {
        if (bases[i] && *bases[i]) test_pause(l, bases[i]);
    }
    snowmint_layout_free(l);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) failed++;
    printf("coord: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
