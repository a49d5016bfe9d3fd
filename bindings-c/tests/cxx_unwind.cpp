// Clock callbacks must not unwind (snowmint.h, snowmint_clock_fn). This program checks both halves of
// that contract from C++:
//  1. the documented way to fail: a callback catches its own exception and returns NaN from a
//     snowmint_clock_f64_fn, and the call returns SNOWMINT_RESULT_INVALID_CLOCK, writing nothing;
//  2. an exception that escapes a callback anyway does not run on through the library (undefined
//     behaviour were the callback type plain "C"): it stops at the API's panic boundary, which cannot
//     catch a foreign exception, and the process aborts. Run in a forked child, which must die by
//     SIGABRT without returning from snowmint_next_id.
#include <snowmint.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace {

int passed = 0, failed = 0;

void check(bool ok, const char *what) {
    if (ok) {
        ++passed;
    } else {
        ++failed;
        std::fprintf(stderr, "FAILED: %s\n", what);
    }
}

double read_time_source() { throw std::runtime_error("time source unavailable"); }

extern "C" double catching_clock(void *) {
    try {
        return read_time_source();
    } catch (...) {
        return std::nan("");
    }
}

extern "C" double throwing_clock(void *) { return read_time_source(); }

snowmint_generator *generator_with(snowmint_clock_f64_fn clock) {
    snowmint_layout *layout = nullptr;
    if (snowmint_layout_new_preset("twitter", &layout) != SNOWMINT_RESULT_OK) return nullptr;
    snowmint_options options;
    snowmint_options_default(&options);
    options.clock_f64 = clock;
    snowmint_generator *gen = nullptr;
    snowmint_result r = snowmint_generator_new(layout, 1, &options, &gen);
    snowmint_layout_free(layout);
    return r == SNOWMINT_RESULT_OK ? gen : nullptr;
}

}  // namespace

int main() {
    // 1. Caught inside the callback: a result code.
    snowmint_generator *gen = generator_with(catching_clock);
    check(gen != nullptr, "generator with a catching clock");
    uint64_t id = 42;
    check(snowmint_next_id(gen, &id) == SNOWMINT_RESULT_INVALID_CLOCK, "NaN reading is INVALID_CLOCK");
    check(id == 42, "nothing written on failure");
    snowmint_generator_free(gen);

    // 2. Escaping the callback: the process aborts at the boundary, it does not return.
    std::fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        snowmint_generator *g = generator_with(throwing_clock);
        uint64_t out = 0;
        snowmint_next_id(g, &out);
        std::_Exit(0);  // not reached if the unwind is stopped
    }
    int status = 0;
    check(child > 0 && waitpid(child, &status, 0) == child, "child ran");
    check(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
          "an exception escaping a callback aborts the process (SIGABRT), never returns");

    std::printf("cxx-unwind: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
