/* Forked workers of one service mint under one node ID through a state file (compiled and run by
 * `make check`; tests/state_file.c runs the same pattern with 4 x 10^6 IDs and checks every ID).
 *   cc workers.c $(pkg-config --cflags --libs snowmint) -o workers && ./workers /dev/shm/orders.snowmint */
#include <inttypes.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <snowmint.h>

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "/dev/shm/orders.snowmint";
    snowmint_layout *layout = NULL;
    snowmint_shared_generator *gen = NULL;
    snowmint_layout_new_preset("twitter", &layout);
    /* Every process that opens this file mints from its state word: node 3 for all of them. */
    snowmint_result r = snowmint_shared_generator_open_file(path, layout, 3, NULL, &gen);
    if (r != SNOWMINT_RESULT_OK) {
        char msg[256];
        snowmint_last_error_message(msg, sizeof msg, NULL);
        fprintf(stderr, "%s: %s: %s\n", path, snowmint_result_name(r), msg); /* STATE_FILE_MISMATCH … */
        return 1;
    }
    fflush(stdout);
    for (int w = 0; w < 4; w++) {
        if (fork() == 0) { /* the handle stays valid in the child: the file is shared, not copied */
            uint64_t id;
            for (int i = 0; i < 3; i++) {
                if (snowmint_shared_next_id(gen, &id) != SNOWMINT_RESULT_OK) _exit(1);
                printf("worker %d (pid %d): %" PRIu64 "\n", w, (int)getpid(), id);
            }
            fflush(stdout);
            _exit(0);
        }
    }
    int failed = 0, status;
    while (wait(&status) > 0) failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    snowmint_shared_generator_flush(gen); /* durable on disk now (a no-op in effect on tmpfs) */
    snowmint_shared_generator_free(gen);
    snowmint_layout_free(layout);
    return failed;
}
