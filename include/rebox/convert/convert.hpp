// The pipeline: read -> plan -> encode -> write (atomic) -> verify, streaming tensor by tensor on
// all cores.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "rebox/format/gguf_shards.hpp"
#include "rebox/plan/plan.hpp"
#include "rebox/verify/verify.hpp"

namespace rebox {

struct ConvertOptions {
    std::filesystem::path model_dir;
    std::filesystem::path output;
    PlanOptions plan;
    bool verify = true;
    bool overwrite = false;
    unsigned threads = 0;   // 0: all cores
    bool progress = false;  // one-line progress on stderr
    SplitLimits split;      // any limit set: write OUTPUT-without-.gguf-00001-of-0000N.gguf shards
};

struct ConvertResult {
    Plan plan;
    uint64_t output_bytes = 0;                   // all shards together
    std::vector<std::filesystem::path> outputs;  // the files written (one unless split)
    double seconds_total = 0, seconds_write = 0, seconds_verify = 0;
    std::optional<VerifyReport> verify;  // nullopt when --no-verify
    bool committed = false;              // the output exists (false: verification failed)
};

// Throws rebox::Error: blocker class (message lists every BLOCKER) before anything is written,
// input class for unreadable/malformed input or I/O errors. When the written file does not verify,
// returns with committed == false and the failing report: the target is then never created.
ConvertResult convert_model(const ConvertOptions& options);

}  // namespace rebox
