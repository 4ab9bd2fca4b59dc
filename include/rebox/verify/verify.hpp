// Independent read-back proof: opens the GGUF with the format layer's reader only, maps each tensor
// back to its source tensor by the inverse name map, dequantizes the GGUF blocks itself and
// compares fp32 bit patterns against code*scale+min (GPTQ / AWQ / compressed-tensors: (q - z) * s)
// computed from the source with its own unpacking path. Shares no code with source/, plan/ or
// encode/.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "rebox/format/gguf_shards.hpp"

namespace rebox {

struct TensorCheck {
    std::string gguf_name;
    std::string source_name;
    std::string gguf_type;    // "Q4_1", "F32", ...
    bool re_encoded = false;  // source was quantized
    bool generated = false;   // no source tensor: computed from config.json (rope_freqs)
    bool identical = false;
    uint64_t values = 0;
    uint64_t mismatches = 0;
    uint64_t first_diff = 0;  // valid when mismatches > 0
    uint32_t expected_bits = 0;
    uint32_t got_bits = 0;
    double max_abs_error = 0.0;
    std::string problem;  // type/shape/missing problems (then identical = false)
};

struct VerifyReport {
    std::vector<TensorCheck> tensors;
    std::vector<std::string> problems;  // tensor set, KV and layout problems, one line each
    size_t re_encoded_total = 0;
    size_t re_encoded_identical = 0;
    size_t copied_total = 0;  // float source tensors (copied, widened or recast exactly)
    size_t copied_identical = 0;
    size_t generated_total = 0;  // tensors computed from config.json (rope_freqs.weight)
    size_t generated_identical = 0;
    double max_abs_error = 0.0;
    bool ok() const;
    // "re-encoded tensors bit-identical: 197/197, max abs error 0.0; copied tensors
    // bit-identical: 113/113", then "; generated tensors bit-identical: 1/1" when there are any
    std::string summary() const;
};

struct VerifyOptions {
    unsigned threads = 0;  // 0: all cores
};

// Throws rebox::Error (input class) only when a file cannot be read at all; every mismatch is in
// the report. `gguf` may be the first shard of a split set (the others are found from its name).
VerifyReport verify_gguf(const std::filesystem::path& model_dir, const std::filesystem::path& gguf,
                         const VerifyOptions& options = {});
// The same on an opened (possibly split) set, e.g. temporary files before they are renamed.
VerifyReport verify_gguf_set(const std::filesystem::path& model_dir, GgufSet gguf,
                             const VerifyOptions& options = {});

// Verification while the file is being written (rebox convert): the constructor reads the source
// and pairs every tensor from the GGUF header (already final on disk; tensor bytes may still be
// missing); the writer reports each region once its bytes are final, and threads run the value
// checks of fully written regions, reading them back from the file through verify's own mapping
// and dequantizers (never the writer's buffers). finish() checks what is left (every byte must
// have been written by then), the generated tensors, KVs and layout, and returns the same report
// as verify_gguf_set on the finished file.
class VerifySession {
  public:
    VerifySession(const std::filesystem::path& model_dir, GgufSet gguf,
                  const VerifyOptions& options = {});
    ~VerifySession();
    VerifySession(const VerifySession&) = delete;
    VerifySession& operator=(const VerifySession&) = delete;
    // Bytes [offset, offset+length) of shard `shard` are final (each byte reported at most once).
    // Thread-safe.
    void region_written(size_t shard, uint64_t offset, uint64_t length);
    // Checks one fully written region's values if one is waiting; false if none is. Thread-safe.
    bool run_ready_unit();
    // Call once, after the last byte is written.
    VerifyReport finish();

  private:
    struct State;
    std::filesystem::path model_dir_;
    std::unique_ptr<State> state_;
};

}  // namespace rebox
