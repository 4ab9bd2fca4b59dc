// The outputs of one conversion, exact or quantized: the temporary files with their final headers,
// the verification session that reads them back while they are written, and the end: verified
// files renamed into place (all or nothing), or discarded when the verification fails.
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "format/atomic_output.hpp"
#include "format/gguf_shards.hpp"
#include "rebox/rebox.hpp"
#include "source/source_model.hpp"
#include "verify/verify.hpp"

namespace rebox::convert_detail {

// Seconds from `start` to now (the reports' timings).
double seconds_since(std::chrono::steady_clock::time_point start);

struct ConvertOutputs {
    std::vector<std::unique_ptr<AtomicOutput>> files;  // one per shard of the layout
    std::unique_ptr<VerifySession> verify;             // null with options.verify false
    // Another file's verification (the mmproj's), folded into the verdict before the commit.
    std::optional<VerifyReport> also_verified;
    std::chrono::steady_clock::time_point write_start;
};

// Creates the temporary files (refusing existing outputs without force), writes each shard's
// header and opens the verification session on them.
ConvertOutputs open_outputs(const ConvertOptions& options, const SourceModel& source,
                            const ShardedLayout& layout,
                            const std::vector<std::filesystem::path>& paths, unsigned threads);

// After the last byte: the verification's verdict into `result` (seconds_write, seconds_verify,
// verify), then the files renamed into place (result.written) or, when it failed, discarded.
void finish_outputs(ConvertOutputs& outputs, ConvertReport& result);

}  // namespace rebox::convert_detail
