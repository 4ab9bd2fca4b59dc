// Streaming xxh64 (libxxhash) + sha256 (OpenSSL EVP) of each tensor's bytes and of the KV section;
// manifest lines, their parser and the comparison.
#include "gguf_tools/gguf_hash.hpp"

#include <openssl/evp.h>
#include <xxhash.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>

#include "format/gguf_layout.hpp"
#include "format/gguf_shards.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

constexpr size_t kChunkBytes = 1 << 20;

// Both digests over one byte stream.
class DualHasher {
  public:
    DualHasher() : xxh_(XXH64_createState()), sha_(EVP_MD_CTX_new()) {
        if (xxh_ == nullptr || sha_ == nullptr || XXH64_reset(xxh_, 0) != XXH_OK ||
            EVP_DigestInit_ex(sha_, EVP_sha256(), nullptr) != 1)
            throw Error(ExitClass::input, "hash: cannot initialise xxh64/sha256");
    }
    ~DualHasher() {
        XXH64_freeState(xxh_);
        EVP_MD_CTX_free(sha_);
    }
    DualHasher(const DualHasher&) = delete;
    DualHasher& operator=(const DualHasher&) = delete;

    void update(std::span<const uint8_t> bytes) {
        if (XXH64_update(xxh_, bytes.data(), bytes.size()) != XXH_OK ||
            EVP_DigestUpdate(sha_, bytes.data(), bytes.size()) != 1)
            throw Error(ExitClass::input, "hash: digest update failed");
    }
    HashEntry finish(std::string name) {
        HashEntry entry;
        entry.name = std::move(name);
        entry.xxh64 = XXH64_digest(xxh_);
        unsigned int length = 0;
        if (EVP_DigestFinal_ex(sha_, entry.sha256.data(), &length) != 1 || length != 32)
            throw Error(ExitClass::input, "hash: sha256 failed");
        return entry;
    }

  private:
    XXH64_state_t* xxh_;
    EVP_MD_CTX* sha_;
};

std::string hex(const uint8_t* bytes, size_t n) {
    static const char digits[] = "0123456789abcdef";
    std::string text;
    for (size_t i = 0; i < n; ++i) {
        text += digits[bytes[i] >> 4];
        text += digits[bytes[i] & 15];
    }
    return text;
}

bool parse_hex(std::string_view text, uint8_t* out) {
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    for (size_t i = 0; i < text.size() / 2; ++i) {
        const int hi = nibble(text[2 * i]), lo = nibble(text[2 * i + 1]);
        if (hi < 0 || lo < 0) return false;
        out[i] = static_cast<uint8_t>(hi << 4 | lo);
    }
    return true;
}

uint32_t alignment_of(const GgufSet& set) {
    const GgufValue* v = set.find("general.alignment");
    return v != nullptr && v->as_u32() ? *v->as_u32() : kGgufDefaultAlignment;
}

}  // namespace

std::vector<HashEntry> hash_gguf(const std::filesystem::path& file, bool include_kv) {
    const GgufSet set = GgufSet::open(file);
    std::vector<HashEntry> entries;
    if (include_kv) {
        GgufLayout kvs(alignment_of(set));
        for (const GgufKV& kv : set.kvs()) kvs.add_kv(kv.key, kv.value);
        DualHasher hasher;
        hasher.update(kvs.serialize_metadata());
        entries.push_back(hasher.finish(std::string(kKvEntryName)));
    }
    std::vector<const MappedFile*> maps;
    for (size_t s = 0; s < set.shard_count(); ++s) {
        maps.push_back(set.shard(s).mapping());
        if (maps.back() != nullptr) maps.back()->advise_sequential();
    }
    for (const GgufSet::Tensor& t : set.tensors()) {
        if (t.info->name.find('\n') != std::string::npos)
            throw_input_error(file.string(), "tensor name", "contains a newline",
                              "names a manifest line can hold");
        const auto data = set.tensor_data(t);
        DualHasher hasher;
        for (size_t at = 0; at < data.size(); at += kChunkBytes) {
            const auto chunk = data.subspan(at, std::min(kChunkBytes, data.size() - at));
            hasher.update(chunk);
            release_mapped(maps, chunk);
        }
        entries.push_back(hasher.finish(std::string(kTensorEntryPrefix) + t.info->name));
    }
    return entries;
}

std::string manifest_line(const HashEntry& entry) {
    uint8_t xxh[8];
    for (int i = 0; i < 8; ++i) xxh[i] = static_cast<uint8_t>(entry.xxh64 >> (56 - 8 * i));
    return hex(xxh, 8) + " " + hex(entry.sha256.data(), 32) + "  " + entry.name + "\n";
}

std::vector<HashEntry> read_manifest(const std::filesystem::path& path) {
    std::ifstream in(path);
    if (!in) throw_input_error(path.string(), "", "cannot open the manifest");
    std::vector<HashEntry> entries;
    std::string line;
    size_t number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (line.empty()) continue;
        const std::string where = "line " + std::to_string(number);
        HashEntry entry;
        uint8_t xxh[8];
        if (line.size() < 16 + 1 + 64 + 2 + 1 || line[16] != ' ' || line[81] != ' ' ||
            line[82] != ' ' || !parse_hex(std::string_view(line).substr(0, 16), xxh) ||
            !parse_hex(std::string_view(line).substr(17, 64), entry.sha256.data()))
            throw_input_error(path.string(), where, "not a manifest line",
                              "<16 hex xxh64> <64 hex sha256>  kv|tensor:NAME, as rebox hash "
                              "prints");
        for (int i = 0; i < 8; ++i) entry.xxh64 = entry.xxh64 << 8 | xxh[i];
        entry.name = line.substr(83);
        if (entry.name != kKvEntryName && !entry.name.starts_with(kTensorEntryPrefix))
            throw_input_error(path.string(), where, "entry '" + entry.name + "'",
                              "kv or tensor:NAME");
        entries.push_back(std::move(entry));
    }
    if (entries.empty()) throw_input_error(path.string(), "", "no entries", "rebox hash output");
    return entries;
}

ManifestCheck check_manifest(const std::vector<HashEntry>& actual,
                             const std::vector<HashEntry>& expected, bool tensors_only) {
    auto skip = [&](const HashEntry& e) { return tensors_only && e.name == kKvEntryName; };
    std::map<std::string_view, const HashEntry*> have;
    for (const HashEntry& e : actual)
        if (!skip(e)) have[e.name] = &e;
    ManifestCheck check;
    std::map<std::string_view, bool> listed;
    for (const HashEntry& e : expected) {
        if (skip(e)) continue;
        listed[e.name] = true;
        const auto it = have.find(e.name);
        if (it == have.end())
            check.missing.push_back(e.name);
        else if (!(*it->second == e))
            check.differing.push_back(e.name);
        else
            ++check.matching;
    }
    for (const HashEntry& e : actual)
        if (!skip(e) && listed.count(e.name) == 0) check.unexpected.push_back(e.name);
    return check;
}

}  // namespace rebox
