// rebox inspect for safetensors: header size, __metadata__ (the "mcq" value, itself JSON, is
// pretty-printed) and the tensor table. --json schema:
// {"format":"safetensors","file","header_size","metadata":{k: string | parsed object for "mcq"},
//  "tensors":[{"name","dtype","shape","begin","end"}]}
#include <cinttypes>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "format/safetensors.hpp"
#include "format/shape_text.hpp"
#include "inspect.hpp"

namespace rebox::cli {
namespace {

using detail::shape_text;

using Json = nlohmann::ordered_json;

// The "mcq" metadata value parsed as JSON when it is JSON; discarded (nullopt-like) otherwise.
Json parse_mcq(const std::string& key, const std::string& value) {
    if (key != "mcq") return Json();
    Json parsed = Json::parse(value, nullptr, /*allow_exceptions=*/false);
    return parsed.is_discarded() ? Json() : parsed;
}

void print_json(const std::string& path, const SafetensorsFile& file) {
    Json out;
    out["format"] = "safetensors";
    out["file"] = path;
    out["header_size"] = file.header_size();
    Json metadata = Json::object();
    for (const auto& [key, value] : file.metadata()) {
        Json parsed = parse_mcq(key, value);
        metadata[key] = parsed.is_null() ? Json(value) : std::move(parsed);
    }
    out["metadata"] = std::move(metadata);
    Json tensors = Json::array();
    for (const StTensorInfo& t : file.tensors()) {
        Json entry;
        entry["name"] = t.name;
        entry["dtype"] = st_dtype_name(t.dtype);
        entry["shape"] = t.shape;
        entry["begin"] = t.begin;
        entry["end"] = t.end;
        tensors.push_back(std::move(entry));
    }
    out["tensors"] = std::move(tensors);
    const std::string text = out.dump(-1, ' ', false, Json::error_handler_t::replace);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fputc('\n', stdout);
}

void print_text(const std::string& path, const SafetensorsFile& file) {
    std::printf("%s\n", path.c_str());
    std::printf("* safetensors\n");
    std::printf("  header_size   %" PRIu64 "\n", file.header_size());
    std::printf("* %zu metadata entr%s\n", file.metadata().size(),
                file.metadata().size() == 1 ? "y" : "ies");
    for (const auto& [key, value] : file.metadata()) {
        const Json parsed = parse_mcq(key, value);
        if (parsed.is_null()) {
            std::printf("  %s = %s\n", key.c_str(), value.c_str());
            continue;
        }
        std::string pretty = parsed.dump(2, ' ', false, Json::error_handler_t::replace);
        std::string indented;
        for (char c : pretty) indented += c == '\n' ? std::string("\n  ") : std::string(1, c);
        std::printf("  %s =\n  %s\n", key.c_str(), indented.c_str());
    }
    std::printf("* %zu tensor(s)\n", file.tensors().size());
    int name_width = 4;
    int shape_width = 5;
    for (const StTensorInfo& t : file.tensors()) {
        name_width = std::max(name_width, static_cast<int>(t.name.size()));
        shape_width = std::max(shape_width, static_cast<int>(shape_text(t.shape).size()));
    }
    std::printf("  %5s  %-*s  %-7s  %-*s  %12s  %12s\n", "#", name_width, "name", "dtype",
                shape_width, "shape", "begin", "end");
    size_t index = 0;
    for (const StTensorInfo& t : file.tensors()) {
        std::printf("  %5zu  %-*s  %-7s  %-*s  %12" PRIu64 "  %12" PRIu64 "\n", index++, name_width,
                    t.name.c_str(), std::string(st_dtype_name(t.dtype)).c_str(), shape_width,
                    shape_text(t.shape).c_str(), t.begin, t.end);
    }
}

}  // namespace

int inspect_safetensors(const InspectArgs& args) {
    const auto file = SafetensorsFile::open(args.file);
    if (args.json)
        print_json(args.file, *file);
    else
        print_text(args.file, *file);
    return 0;
}

}  // namespace rebox::cli
