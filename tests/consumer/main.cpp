// Uses the installed library: builds a GGUF layout in memory and checks its size arithmetic.
#include <cstdio>

#include "format/gguf_layout.hpp"
#include "format/half.hpp"

int main() {
    rebox::GgufLayout layout;
    layout.add_kv("general.architecture", rebox::GgufValue::str("qwen3"));
    layout.add_tensor("t", {64, 2}, 3);  // Q4_1: 2 rows of 2 blocks = 80 bytes
    const auto meta = layout.serialize_metadata();
    if (meta.size() != layout.data_offset() || layout.file_size() != layout.data_offset() + 96) {
        std::puts("consumer: unexpected layout");
        return 1;
    }
    if (rebox::half_to_float(0x3c00) != 1.0f) return 1;
    std::puts("consumer: ok");
    return 0;
}
