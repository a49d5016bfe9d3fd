/*
 * State-file bench (SPEC §4a) from C: snowmint_shared_next_id on a generator opened with
 * snowmint_shared_generator_open_file against one made with snowmint_shared_generator_new, in
 * interleaved rounds of one run; then 2 forked processes minting from one state file against 2 pthreads
 * minting from one in-process generator (wall time per ID from a common start, CLOCK_MONOTONIC, which
 * all processes share). Prints `STATEFILE <key> <ns per ID> <name>` lines (see bench.sh).
 */
#define _DEFAULT_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "snowmint.h"

#define ROUNDS 60
#define PER_ROUND 50000L
#define PARALLEL_IDS 2000000L
#define PARALLEL_ROUNDS 5

static double mono(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double timed(const snowmint_shared_generator *g, long n) {
    uint64_t id = 0, sink = 0;
    double t0 = mono();
    for (long i = 0; i < n; i++) {
        if (snowmint_shared_next_id(g, &id) != SNOWMINT_RESULT_OK) exit(1);
        sink ^= id;
    }
    double t = mono() - t0;
    if (sink == 42) puts("");
    return t * 1e9 / n;
}

typedef struct {
    const snowmint_shared_generator *g;
    double start_at, end;
} job;

static void mint_from(job *j) {
    uint64_t id = 0;
    while (mono() < j->start_at) {
    }
    for (long i = 0; i < PARALLEL_IDS / 2; i++)
        if (snowmint_shared_next_id(j->g, &id) != SNOWMINT_RESULT_OK) exit(1);
    j->end = mono();
}

static void *thread_main(void *arg) {
    mint_from(arg);
    return NULL;
}

int main(void) {
    char path[256];
    snprintf(path, sizeof path, "/dev/shm/snowmint-c-bench-%d.state", (int)getpid());
    unlink(path);
    snowmint_layout *layout = NULL;
    snowmint_shared_generator *memory = NULL, *file = NULL;
    if (snowmint_layout_new_preset("twitter", &layout) != SNOWMINT_RESULT_OK ||
        snowmint_shared_generator_new(layout, 3, NULL, &memory) != SNOWMINT_RESULT_OK ||
        snowmint_shared_generator_open_file(path, layout, 3, NULL, &file) != SNOWMINT_RESULT_OK) {
        fprintf(stderr, "state_file bench: setup failed\n");
        return 1;
    }
    double best_memory = 1e9, best_file = 1e9;
    for (int r = 0; r < ROUNDS; r++) {
        double a, b;
        if (r % 2 == 0) {
            a = timed(memory, PER_ROUND);
            b = timed(file, PER_ROUND);
        } else {
            b = timed(file, PER_ROUND);
            a = timed(memory, PER_ROUND);
        }
        if (a < best_memory) best_memory = a;
        if (b < best_file) best_file = b;
    }
    printf("STATEFILE memory %.3f C: snowmint_shared_next_id, in process (snowmint_shared_generator_new)\n", best_memory);
    printf("STATEFILE file %.3f C: snowmint_shared_next_id on snowmint_shared_generator_open_file (/dev/shm)\n", best_file);

    double best_threads = 1e9, best_processes = 1e9;
    for (int r = 0; r < PARALLEL_ROUNDS; r++) {
        job jobs[2];
        pthread_t t[2];
        double start_at = mono() + 0.05;
        for (int i = 0; i < 2; i++) {
            jobs[i] = (job){memory, start_at, 0};
            pthread_create(&t[i], NULL, thread_main, &jobs[i]);
        }
        for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
        double end = jobs[0].end > jobs[1].end ? jobs[0].end : jobs[1].end;
        double ns = (end - start_at) * 1e9 / PARALLEL_IDS;
        if (ns < best_threads) best_threads = ns;

        job *shared = mmap(NULL, sizeof(job) * 2, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (shared == MAP_FAILED) return 1;
        start_at = mono() + 0.05;
        pid_t pids[2];
        for (int i = 0; i < 2; i++) {
            pids[i] = fork();
            if (pids[i] == 0) {
                snowmint_shared_generator *own = NULL;
                if (snowmint_shared_generator_open_file(path, layout, 3, NULL, &own) != SNOWMINT_RESULT_OK) _exit(2);
                shared[i] = (job){own, start_at, 0};
                mint_from(&shared[i]);
                _exit(0);
            }
        }
        for (int i = 0; i < 2; i++) {
            int status = 0;
            waitpid(pids[i], &status, 0);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
        }
        end = shared[0].end > shared[1].end ? shared[0].end : shared[1].end;
        ns = (end - start_at) * 1e9 / PARALLEL_IDS;
        if (ns < best_processes) best_processes = ns;
        munmap(shared, sizeof(job) * 2);
    }
    printf("STATEFILE threads2 %.3f C: 2 pthreads, one in-process shared generator\n", best_threads);
    printf("STATEFILE processes2 %.3f C: 2 forked processes, each opening one state file\n", best_processes);
    snowmint_shared_generator_free(memory);
    snowmint_shared_generator_free(file);
    snowmint_layout_free(layout);
    unlink(path);
    return 0;
}
