// libFuzzer harness: the strict GGUF reader on arbitrary bytes; reads back every KV and tensor
// span.
#include <cstddef>
#include <cstdint>

#include "format/gguf_file.hpp"
#include "rebox/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        const auto file = rebox::GgufFile::parse({data, size}, "fuzz.gguf");
        size_t sink = 0;
        for (const auto& kv : file->kvs()) sink += kv.key.size() + kv.value.array.size();
        for (const auto& t : file->tensors()) {
            const auto bytes = file->tensor_data(t);
            if (!bytes.empty()) sink += bytes.front() + bytes.back();
        }
        (void)sink;
    } catch (const rebox::Error&) {
    }
    return 0;
}
