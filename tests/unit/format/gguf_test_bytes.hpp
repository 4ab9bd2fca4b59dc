// Test-side GGUF byte assembler: emits fields exactly as docs/gguf.md §1.1-§1.5 lays them out,
// independent of the writer under test, so hand-made (and deliberately broken) files can be built.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace rebox::test {

struct GgufBytes {
    std::vector<uint8_t> v;

    template <typename T>
    GgufBytes& put(T value) {
        const size_t at = v.size();
        v.resize(at + sizeof(T));
        std::memcpy(v.data() + at, &value, sizeof(T));
        return *this;
    }
    GgufBytes& u8(uint8_t x) { return put(x); }
    GgufBytes& u32(uint32_t x) { return put(x); }
    GgufBytes& i32(int32_t x) { return put(x); }
    GgufBytes& u64(uint64_t x) { return put(x); }
    GgufBytes& i64(int64_t x) { return put(x); }
    GgufBytes& raw(const std::string& s) {
        v.insert(v.end(), s.begin(), s.end());
        return *this;
    }
    GgufBytes& str(const std::string& s) { return u64(s.size()).raw(s); }

    // "GGUF", version, tensor_count, kv_count.
    GgufBytes& header(int64_t n_tensors, int64_t n_kv, uint32_t version = 3) {
        return raw("GGUF").u32(version).i64(n_tensors).i64(n_kv);
    }
    GgufBytes& kv_u32(const std::string& key, uint32_t x) { return str(key).u32(4).u32(x); }
    GgufBytes& kv_str(const std::string& key, const std::string& s) {
        return str(key).u32(8).str(s);
    }
    GgufBytes& tensor(const std::string& name, const std::vector<int64_t>& ne, uint32_t type,
                      uint64_t offset) {
        str(name).u32(static_cast<uint32_t>(ne.size()));
        for (int64_t d : ne) i64(d);
        return u32(type).u64(offset);
    }
    GgufBytes& pad(size_t alignment = 32) {
        while (v.size() % alignment != 0) v.push_back(0);
        return *this;
    }
    GgufBytes& fill(size_t count, uint8_t byte) {
        v.insert(v.end(), count, byte);
        return *this;
    }
};

// 2 tensors, 3 KVs. Byte positions (hand-computed):
//   header 0..24; KV1 8+20+4+8+5 = 45 -> 69; KV2 8+17+4+4 = 33 -> 102;
//   KV3 8+21+4+4+8+(8+1)+(8+2) = 64 -> 166; T1 8+5+4+16+4+8 = 45 -> 211; T2 8+5+4+8+4+8 = 37 ->
//   248. data section at PAD(248, 32) = 256; t.q41 Q4_1 64x4 = 2 blocks*20 B*4 rows = 160 B at 0;
//   t.f32 F32 5 = 20 B at 160; file = 256 + 160 + PAD(20, 32) = 448 bytes.
inline std::vector<uint8_t> small_file() {
    GgufBytes b;
    b.header(2, 3);
    b.kv_str("general.architecture", "qwen3");
    b.kv_u32("qwen3.block_count", 28);
    b.str("tokenizer.ggml.tokens").u32(9).u32(8).u64(2).str("a").str("bc");
    b.tensor("t.q41", {64, 4}, 3, 0);
    b.tensor("t.f32", {5}, 0, 160);
    if (b.v.size() != 248) throw std::logic_error("small_file: metadata is not 248 bytes");
    b.pad();
    for (int i = 0; i < 160; ++i) b.u8(static_cast<uint8_t>(i));
    for (int i = 0; i < 20; ++i) b.u8(static_cast<uint8_t>(200 + i));
    b.pad();
    if (b.v.size() != 448) throw std::logic_error("small_file: file is not 448 bytes");
    return b.v;
}

}  // namespace rebox::test
