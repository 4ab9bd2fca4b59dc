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

#include "format/gguf_shards.hpp"
#include "rebox/rebox.hpp"
#include "source/model_dir.hpp"

namespace rebox {

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
    // The same with the safetensors files the source reader already opened (mappings only);
    // config.json, the tokenizer files and the quantization metadata verify reads itself.
    VerifySession(const ModelDir& model_dir, GgufSet gguf, const VerifyOptions& options = {});
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
    void pair_tensors(const VerifyOptions& options);
    std::filesystem::path model_dir_;
    std::unique_ptr<State> state_;
};

}  // namespace rebox
