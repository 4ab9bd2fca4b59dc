// `rebox hash`: per-tensor xxh64 + sha256 of a GGUF model's tensor bytes (split sets hashed per
// tensor, so a split set and its merged file give the same entries), plus one entry for the KV
// section, as a sha256sum-like manifest; and the comparison of a model against such a manifest.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace rebox {

inline constexpr std::string_view kKvEntryName = "kv";
inline constexpr std::string_view kTensorEntryPrefix = "tensor:";

struct HashEntry {
    std::string name;  // "kv" or "tensor:<tensor name>"
    uint64_t xxh64 = 0;
    std::array<uint8_t, 32> sha256{};
    bool operator==(const HashEntry&) const = default;
};

// Entries in manifest order: "kv" (unless !include_kv), then every tensor in file/shard order.
// The kv entry hashes the KVs (split.* keys left out) serialized as GGUF v3 metadata with no
// tensors, so it does not depend on how the tensors are split. Tensor data is streamed from the
// mapping in 1 MiB chunks whose pages are released after hashing (memory stays flat).
std::vector<HashEntry> hash_gguf(const std::filesystem::path& file, bool include_kv);

// "<16 hex xxh64> <64 hex sha256>  <name>\n"
std::string manifest_line(const HashEntry& entry);
// Parses a manifest written by manifest_line(); throws rebox::Error naming the file and line.
std::vector<HashEntry> read_manifest(const std::filesystem::path& path);

struct ManifestCheck {
    std::vector<std::string> differing;   // in both, hashes differ
    std::vector<std::string> missing;     // in the manifest, not in the model
    std::vector<std::string> unexpected;  // in the model, not in the manifest
    size_t matching = 0;
    bool ok() const { return differing.empty() && missing.empty() && unexpected.empty(); }
};
// Compares; with tensors_only the "kv" entry is ignored on both sides.
ManifestCheck check_manifest(const std::vector<HashEntry>& actual,
                             const std::vector<HashEntry>& expected, bool tensors_only);

}  // namespace rebox
