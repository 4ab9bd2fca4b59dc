// libFuzzer harness: the safetensors header validation on arbitrary bytes.
#include <cstddef>
#include <cstdint>

#include "format/safetensors.hpp"
#include "rebox/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const auto file = rebox::SafetensorsFile::parse({data, size}, "fuzz.safetensors");
        size_t sink = 0;
        for (const auto& t : file->tensors()) {
            const auto bytes = file->data(t);
            if (!bytes.empty()) sink += bytes.front() + bytes.back();
        }
        for (const auto& [k, v] : file->metadata()) sink += k.size() + v.size();
        (void)sink;
    } catch (const rebox::Error&) {
    }
    return 0;
}
