// __metadata__["mcq"] -> mcq::FileMetadata with nlohmann::json: version must be 1, "tensors" an
// object of {bits, group, layout, shape}. Field presence/type problems are recorded per entry.
#include "mcq_metadata.hpp"

#include <climits>
#include <nlohmann/json.hpp>

#include "rebox/error.hpp"

namespace rebox::mcq {
namespace {

using nlohmann::json;

std::optional<int64_t> as_int(const json& value) {
    if (value.is_number_unsigned()) {
        const uint64_t u = value.get<uint64_t>();
        if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
        return static_cast<int64_t>(u);
    }
    if (value.is_number_integer()) return value.get<int64_t>();
    return std::nullopt;
}

Entry parse_entry(const json& value) {
    Entry entry;
    if (!value.is_object()) {
        entry.problem = "metadata entry is not an object with bits, group, layout, shape";
        return entry;
    }
    for (const char* field : {"bits", "group", "layout", "shape"}) {
        if (!value.contains(field)) {
            entry.problem = std::string("metadata entry has no '") + field + "' field";
            return entry;
        }
    }
    const auto bits = as_int(value["bits"]);
    const auto group = as_int(value["group"]);
    if (!bits) entry.problem = "metadata 'bits' is not an integer";
    if (!group && entry.problem.empty()) entry.problem = "metadata 'group' is not an integer";
    if (!value["layout"].is_string() && entry.problem.empty())
        entry.problem = "metadata 'layout' is not a string";
    if (!value["shape"].is_array() && entry.problem.empty())
        entry.problem = "metadata 'shape' is not an array";
    if (!entry.problem.empty()) return entry;
    // bits is an int everywhere after this; a value no int holds is outside 1..8 as the reader
    // says of any other.
    if (*bits < INT_MIN || *bits > INT_MAX) {
        entry.problem = "bits " + std::to_string(*bits) + " is outside 1..8";
        return entry;
    }
    entry.bits = static_cast<int>(*bits);
    entry.group = *group;
    entry.layout = value["layout"].get<std::string>();
    for (const json& dim : value["shape"]) {
        const auto d = as_int(dim);
        if (!d) {
            entry.problem = "metadata 'shape' holds a value that is not an integer";
            return entry;
        }
        entry.shape.push_back(*d);
    }
    return entry;
}

Blocker file_blocker(const std::string& file_name, std::string reason, std::string fix) {
    return Blocker{file_name + ": __metadata__.mcq", std::move(reason), std::move(fix)};
}

}  // namespace

FileMetadata parse_file_metadata(const std::string& file_name,
                                 const std::map<std::string, std::string>& st_metadata) {
    FileMetadata result;
    const auto it = st_metadata.find(kMetadataKey);
    if (it == st_metadata.end()) return result;
    result.present = true;
    json root;
    try {
        root = json::parse(it->second);
    } catch (const json::exception& e) {
        throw_input_error(file_name, "__metadata__.mcq",
                          "not valid JSON: " + std::string(e.what()));
    }
    if (!root.is_object()) {
        result.file_blocker =
            file_blocker(file_name, "the mcq metadata is not a JSON object", "re-export as mcq-v1");
        return result;
    }
    const auto version = root.contains("version") ? as_int(root["version"]) : std::nullopt;
    if (!version || *version != kVersion) {
        const std::string shown = root.contains("version") ? root["version"].dump() : "missing";
        result.file_blocker =
            file_blocker(file_name, "mcq version " + shown + " is not supported (expected 1)",
                         "re-export the checkpoint as mcq version 1");
        return result;
    }
    if (!root.contains("tensors") || !root["tensors"].is_object()) {
        result.file_blocker = file_blocker(file_name, "mcq metadata has no 'tensors' object",
                                           "re-export as mcq-v1 (\"tensors\": {name: {...}})");
        return result;
    }
    for (const auto& [name, value] : root["tensors"].items())
        result.entries[name] = parse_entry(value);
    return result;
}

}  // namespace rebox::mcq
