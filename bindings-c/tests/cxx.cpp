// The header compiles as C++ (extern "C", fixed-width enums) and links.
#include <snowmint.h>

#include <cstdio>
#include <cstring>

int main() {
    snowmint_layout *layout = nullptr;
    if (snowmint_layout_new_preset("discord", &layout) != SNOWMINT_RESULT_OK) return 1;
    snowmint_generator *gen = nullptr;
    snowmint_result r = snowmint_generator_new(layout, 3, nullptr, &gen);
    uint64_t id = 0;
    if (r == SNOWMINT_RESULT_OK) r = snowmint_next_id(gen, &id);
    snowmint_decoded d;
    if (r == SNOWMINT_RESULT_OK) r = snowmint_decode(layout, id, &d);
    bool ok = r == SNOWMINT_RESULT_OK && d.node == 3 && std::strlen(d.iso) == 24;
    snowmint_generator_free(gen);
    snowmint_layout_free(layout);
    std::printf("cxx: %d passed, %d failed\n", ok ? 1 : 0, ok ? 0 : 1);
    return ok ? 0 : 1;
}
