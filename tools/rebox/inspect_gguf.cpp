// rebox inspect for GGUF: header facts, every KV (gguf-dump style), the tensor table and totals per
// type; --header explains bytes 0..23 as annotated hex; --json prints the schema other tools parse:
// {"format":"gguf","file","version","alignment","data_offset","file_size","kv_count","tensor_count",
//  "kv":[{"key","type","value"} | {"key","type":"ARRAY","elem_type","length","value":[...]}],
//  "tensors":[{"name","type","type_id","ne","offset","nbytes"}],"totals":{TYPE:{"count","bytes"}}}
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "format/gguf_file.hpp"
#include "format/gguf_shards.hpp"
#include "format/mapped_file.hpp"
#include "format/shape_text.hpp"
#include "gguf_tools/trailing_data.hpp"
#include "inspect.hpp"
#include "rebox/error.hpp"
#include "rebox/ggml_type.hpp"

namespace rebox::cli {
namespace {

using detail::dims_text;

using Json = nlohmann::ordered_json;

struct TypeTotal {
    uint64_t count = 0;
    uint64_t bytes = 0;
};

std::map<GgmlType, TypeTotal> totals_by_type(const std::vector<const GgufTensorInfo*>& tensors);

std::vector<const GgufTensorInfo*> tensor_list(const GgufFile& file) {
    std::vector<const GgufTensorInfo*> list;
    for (const GgufTensorInfo& t : file.tensors()) list.push_back(&t);
    return list;
}

std::map<GgmlType, TypeTotal> totals_by_type(const GgufFile& file) {
    return totals_by_type(tensor_list(file));
}

std::map<GgmlType, TypeTotal> totals_by_type(const std::vector<const GgufTensorInfo*>& tensors) {
    std::map<GgmlType, TypeTotal> totals;
    for (const GgufTensorInfo* t : tensors) {
        totals[t->type].count += 1;
        totals[t->type].bytes += t->nbytes;
    }
    return totals;
}

Json scalar_json(const GgufScalar& scalar) {
    if (const auto* u = std::get_if<uint64_t>(&scalar)) return *u;
    if (const auto* i = std::get_if<int64_t>(&scalar)) return *i;
    if (const auto* d = std::get_if<double>(&scalar))
        return *d;  // FLOAT32 is held exactly as double
    if (const auto* b = std::get_if<bool>(&scalar)) return *b;
    return std::get<std::string>(scalar);
}

Json kv_json(const GgufKV& kv) {
    Json out;
    out["key"] = kv.key;
    out["type"] = gguf_type_name(kv.value.type);
    if (!kv.value.is_array()) {
        out["value"] = scalar_json(kv.value.scalar);
        return out;
    }
    out["elem_type"] = gguf_type_name(kv.value.elem_type);
    out["length"] = kv.value.array.size();
    Json items = Json::array();
    for (const GgufScalar& item : kv.value.array) items.push_back(scalar_json(item));
    out["value"] = std::move(items);
    return out;
}

Json totals_json(const std::map<GgmlType, TypeTotal>& totals) {
    Json out = Json::object();
    for (const auto& [type, total] : totals)
        out[ggml_type_name(type)] = Json{{"count", total.count}, {"bytes", total.bytes}};
    return out;
}

std::vector<const GgufTensorInfo*> set_tensor_list(const GgufSet& set) {
    std::vector<const GgufTensorInfo*> list;
    for (const auto& t : set.tensors()) list.push_back(t.info);
    return list;
}

// The whole set when `file` is the first shard of a split model.
Json split_json(const GgufSet& set) {
    Json shards = Json::array();
    for (size_t i = 0; i < set.shard_count(); ++i)
        shards.push_back({{"file", set.shard(i).display_name()},
                          {"tensor_count", set.shard(i).tensors().size()},
                          {"file_size", set.shard(i).file_size()}});
    return {{"count", set.shard_count()},
            {"shards", std::move(shards)},
            {"tensor_count", set.tensors().size()},
            {"totals", totals_json(totals_by_type(set_tensor_list(set)))}};
}

void print_json(const std::string& path, const GgufFile& file, const GgufSet* set) {
    Json out;
    out["format"] = "gguf";
    out["file"] = path;
    out["version"] = file.version();
    out["alignment"] = file.alignment();
    out["data_offset"] = file.data_offset();
    out["file_size"] = file.file_size();
    out["kv_count"] = file.kvs().size();
    out["tensor_count"] = file.tensors().size();
    Json kvs = Json::array();
    for (const GgufKV& kv : file.kvs()) kvs.push_back(kv_json(kv));
    out["kv"] = std::move(kvs);
    Json tensors = Json::array();
    for (const GgufTensorInfo& t : file.tensors()) {
        Json entry;
        entry["name"] = t.name;
        entry["type"] = ggml_type_name(t.type);
        entry["type_id"] = t.type;
        entry["ne"] = t.ne;
        entry["offset"] = t.offset;
        entry["nbytes"] = t.nbytes;
        tensors.push_back(std::move(entry));
    }
    out["tensors"] = std::move(tensors);
    out["totals"] = totals_json(totals_by_type(file));
    if (set != nullptr) out["split"] = split_json(*set);
    // Strings are bytes from the file: replace invalid UTF-8 instead of throwing.
    const std::string text = out.dump(-1, ' ', false, Json::error_handler_t::replace);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
}

void print_totals(const std::map<GgmlType, TypeTotal>& totals) {
    TypeTotal all;
    for (const auto& [type, total] : totals) {
        std::printf("  %-7s  count %6" PRIu64 "  bytes %14" PRIu64 "\n",
                    ggml_type_name(type).c_str(), total.count, total.bytes);
        all.count += total.count;
        all.bytes += total.bytes;
    }
    std::printf("  %-7s  count %6" PRIu64 "  bytes %14" PRIu64 "\n", "all", all.count, all.bytes);
}

void print_text(const std::string& path, const GgufFile& file, const GgufSet* set) {
    std::printf("%s\n", path.c_str());
    std::printf("* GGUF header\n");
    std::printf("  magic         GGUF\n");
    std::printf("  version       %u\n", file.version());
    std::printf("  tensor_count  %zu\n", file.tensors().size());
    std::printf("  kv_count      %zu\n", file.kvs().size());
    std::printf("  alignment     %u\n", file.alignment());
    std::printf("  data_offset   %" PRIu64 "\n", file.data_offset());
    std::printf("  file_size     %" PRIu64 "\n", file.file_size());

    std::printf("* %zu key/value pair(s)\n", file.kvs().size());
    size_t index = 0;
    for (const GgufKV& kv : file.kvs()) {
        std::printf("  %5zu: %-10s | %s = %s\n", ++index,
                    std::string(gguf_type_name(kv.value.type)).c_str(), kv.key.c_str(),
                    gguf_value_to_string(kv.value).c_str());
    }

    std::printf("* %zu tensor(s)\n", file.tensors().size());
    int name_width = 4;
    int ne_width = 2;
    for (const GgufTensorInfo& t : file.tensors()) {
        name_width = std::max(name_width, static_cast<int>(t.name.size()));
        ne_width = std::max(ne_width, static_cast<int>(dims_text(t.ne).size()));
    }
    std::printf("  %5s  %-*s  %-*s  %-7s  %12s  %12s\n", "#", name_width, "name", ne_width, "ne",
                "type", "offset", "bytes");
    index = 0;
    for (const GgufTensorInfo& t : file.tensors()) {
        std::printf("  %5zu  %-*s  %-*s  %-7s  %12" PRIu64 "  %12" PRIu64 "\n", index++, name_width,
                    t.name.c_str(), ne_width, dims_text(t.ne).c_str(),
                    ggml_type_name(t.type).c_str(), t.offset, t.nbytes);
    }

    std::printf("* totals by type\n");
    print_totals(totals_by_type(file));
    if (set == nullptr) return;
    std::printf("* split set: %zu shards, %zu tensors in all\n", set->shard_count(),
                set->tensors().size());
    for (size_t i = 0; i < set->shard_count(); ++i)
        std::printf("  %5zu  %s  tensors %zu  bytes %" PRIu64 "\n", i + 1,
                    set->shard(i).display_name().c_str(), set->shard(i).tensors().size(),
                    set->shard(i).file_size());
    std::printf("* totals by type over the set\n");
    print_totals(totals_by_type(set_tensor_list(*set)));
}

uint64_t read_le(const uint8_t* p, size_t size) {
    uint64_t value = 0;
    for (size_t i = size; i-- > 0;) value = (value << 8) | p[i];
    return value;
}

// Bytes 0..23: magic, version, tensor_count, kv_count, each with its decoded value.
void print_header(const std::string& path, std::span<const uint8_t> bytes) {
    std::printf("%s: GGUF header, bytes 0..23 (little-endian)\n", path.c_str());
    struct Field {
        size_t offset, size;
        const char* name;
    };
    for (const Field& f : {Field{0, 4, "magic"}, Field{4, 4, "version"},
                           Field{8, 8, "tensor_count"}, Field{16, 8, "kv_count"}}) {
        std::string hex;
        for (size_t i = 0; i < f.size; ++i) {
            char byte[4];
            std::snprintf(byte, sizeof byte, "%02x ", bytes[f.offset + i]);
            hex += byte;
        }
        std::string decoded;
        if (f.offset == 0) {
            decoded = "'";
            for (size_t i = 0; i < 4; ++i) {
                const char c = static_cast<char>(bytes[i]);
                decoded += (c >= 0x20 && c < 0x7f) ? c : '?';
            }
            decoded += "'";
        } else if (f.size == 4) {
            decoded = std::to_string(read_le(bytes.data() + f.offset, 4));
        } else {
            decoded = std::to_string(static_cast<int64_t>(read_le(bytes.data() + f.offset, 8)));
        }
        std::printf("  %08zx  %-24s %-13s %s\n", f.offset, hex.c_str(), f.name, decoded.c_str());
    }
}

}  // namespace

int inspect_gguf(const InspectArgs& args) {
    if (args.header) {
        const MappedFile mapped(args.file);
        if (mapped.size() < 24 || std::memcmp(mapped.bytes().data(), "GGUF", 4) != 0) {
            GgufFile::open(args.file);  // reports the bad magic or exactly which field is truncated
            throw_input_error(args.file, "header", "not a GGUF header", "'GGUF' and 24 bytes");
        }
        print_header(args.file, mapped.bytes());
        std::fflush(stdout);
        GgufFile::open(args.file);  // the rest of the file must be valid too (exit 1 otherwise)
        return 0;
    }
    const auto file = GgufFile::open(args.file);
    // Shards joined with `cat` (another GGUF header after the tensor data) are refused in one
    // line; other trailing bytes are only noted.
    if (const auto trailing = find_trailing_data(*file)) {
        if (trailing->next_header) throw Error(ExitClass::input, trailing->explanation);
        std::fprintf(stderr, "rebox: note: %s\n", trailing->explanation.c_str());
    }
    // The first shard of a split model: open (and check) the whole set too.
    std::optional<GgufSet> set;
    const GgufValue* split_count = file->find(kSplitCountKey);
    if (split_count != nullptr && split_count->as_u16().value_or(0) > 1)
        set = GgufSet::open(args.file);
    if (args.json)
        print_json(args.file, *file, set ? &*set : nullptr);
    else
        print_text(args.file, *file, set ? &*set : nullptr);
    return 0;
}

}  // namespace rebox::cli
