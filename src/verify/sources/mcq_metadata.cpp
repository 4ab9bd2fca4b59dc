// mcq-v1 metadata parsing with nlohmann::json and the spec's refusal rules (version 1, layout lsb0,
// bits 1..8, group >= 1, 2-D shape, N % group == 0).
#include "verify/sources/mcq_metadata.hpp"

#include <limits>
#include <nlohmann/json.hpp>

#include "rebox/error.hpp"

namespace rebox::verify_ref::mcq {
namespace {

bool read_unsigned(const nlohmann::json& object, const char* key, uint64_t* out) {
    const auto it = object.find(key);
    if (it == object.end() || !it->is_number_integer()) return false;
    if (it->is_number_unsigned()) {
        *out = it->get<uint64_t>();
        return true;
    }
    const int64_t value = it->get<int64_t>();
    if (value < 0) return false;
    *out = static_cast<uint64_t>(value);
    return true;
}

// Empty string when the entry is valid (entry filled), else what is wrong.
std::string parse_entry(const nlohmann::json& item, Entry* entry, std::string* expected) {
    const auto fail = [expected](std::string expectation, std::string what) {
        *expected = std::move(expectation);
        return what;
    };
    if (!item.is_object()) return fail("an object", "entry is not an object");
    uint64_t bits = 0, group = 0;
    if (!read_unsigned(item, "bits", &bits) || bits < 1 || bits > 8)
        return fail("integer 1..8", "bits missing or out of range");
    if (!read_unsigned(item, "group", &group) || group < 1)
        return fail("integer >= 1", "group missing or < 1");
    const auto layout = item.find("layout");
    if (layout == item.end() || !layout->is_string() || layout->get<std::string>() != "lsb0")
        return fail("\"lsb0\"", "layout missing or unknown");
    const auto shape = item.find("shape");
    if (shape == item.end() || !shape->is_array() || shape->size() != 2)
        return fail("[rows, cols]", "shape missing or not 2-D");
    for (const nlohmann::json& dim : *shape) {
        if (!dim.is_number_integer() || dim.get<int64_t>() < 1)
            return fail("positive integers", "shape has a non-positive or non-integer dim");
        entry->shape.push_back(dim.get<int64_t>());
    }
    const uint64_t rows = static_cast<uint64_t>(entry->shape[0]);
    const uint64_t cols = static_cast<uint64_t>(entry->shape[1]);
    if (rows > std::numeric_limits<uint64_t>::max() / 8 / cols)
        return fail("rows*cols*bits within 64 bits", "shape too large");
    entry->bits = static_cast<unsigned>(bits);
    entry->group = group;
    entry->element_count = rows * cols;
    if (entry->element_count % group != 0)
        return fail("rows*cols a multiple of group",
                    "rows*cols = " + std::to_string(entry->element_count) +
                        " not divisible by group " + std::to_string(group));
    return "";
}

}  // namespace

FileMetadata parse_file_metadata(std::string_view json_text, const std::string& file_name,
                                 std::vector<std::string>& problems) {
    FileMetadata metadata;
    const nlohmann::json root =
        nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
    if (root.is_discarded() || !root.is_object()) {
        problems.push_back(error_message(file_name, "__metadata__.mcq", "not a JSON object",
                                         "mcq-v1 metadata JSON"));
        return metadata;
    }
    const auto version = root.find("version");
    if (version == root.end() || !version->is_number_integer() || version->get<int64_t>() != 1) {
        problems.push_back(
            error_message(file_name, "__metadata__.mcq.version", "missing or unsupported", "1"));
        return metadata;
    }
    const auto tensors = root.find("tensors");
    if (tensors == root.end() || !tensors->is_object()) {
        problems.push_back(
            error_message(file_name, "__metadata__.mcq.tensors", "missing or not an object"));
        return metadata;
    }
    for (const auto& [name, item] : tensors->items()) {
        Entry entry;
        std::string expected;
        const std::string what = parse_entry(item, &entry, &expected);
        if (!what.empty()) {
            problems.push_back(error_message(file_name, name, "mcq metadata: " + what, expected));
            continue;
        }
        metadata.entries.emplace(name, std::move(entry));
    }
    return metadata;
}

}  // namespace rebox::verify_ref::mcq
