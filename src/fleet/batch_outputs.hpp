// What a batch index leaves in the output folder: DIR/NAME.gguf (or its shards),
// DIR/mmproj-NAME.gguf for a multimodal checkpoint, and DIR/NAME.json, which is convert's report on
// success and a failure record otherwise. Decides whether an index is already done (the retry of a
// finished pod is a no-op) and renders the summary of a whole run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "fleet/manifest.hpp"

namespace rebox::fleet {

std::filesystem::path gguf_path(const std::filesystem::path& out_dir, const ManifestEntry& entry);
std::filesystem::path report_path(const std::filesystem::path& out_dir, const ManifestEntry& entry);
// The vision projector convert writes beside DIR/NAME.gguf for a multimodal checkpoint:
// DIR/mmproj-NAME.gguf (part of the index's outputs: checked by index_state, removed on a redo).
std::filesystem::path mmproj_path(const std::filesystem::path& out_dir, const ManifestEntry& entry);

// The failure record written when convert did not succeed (convert writes no report then).
nlohmann::json failure_record(const Manifest& manifest, uint64_t index, const ManifestEntry& entry,
                              int exit_code, const std::string& message, double seconds);

enum class Verdict { ok, failed, missing, incomplete };
const char* verdict_name(Verdict verdict);

struct IndexState {
    Verdict verdict = Verdict::missing;
    uint64_t bytes = 0;  // output bytes (ok), 0 otherwise
    double seconds = 0;  // conversion seconds from the report
    int exit_code = 0;   // failed: the recorded exit code
    std::string detail;  // failed/incomplete: why
};

// Reads DIR/NAME.json and checks the files it lists: ok only for a success report whose files
// all exist with the sizes it records (a GGUF without report, or a report without its GGUF, is
// not done). Never throws for a missing or unreadable report.
IndexState index_state(const std::filesystem::path& out_dir, const ManifestEntry& entry);

}  // namespace rebox::fleet
