// Small-file JSON reading shared by config.json, modules.json and tokenizer_config.json.
#include "json_file.hpp"

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "rebox/error.hpp"

namespace rebox::detail {

void check_file_size(const std::filesystem::path& path, uint64_t max_bytes) {
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(path, ec);
    if (ec || size <= max_bytes) return;
    throw_input_error(path.string(), "",
                      "is " + std::to_string(size) + " bytes, over rebox's " +
                          std::to_string(max_bytes >> 20) + " MiB limit for this file",
                      "the model's own " + path.filename().string());
}

uint64_t side_file_cap(const std::filesystem::path& path) {
    return path.filename() == "config.json" ? kMaxConfigBytes : kMaxSideFileBytes;
}

std::string read_side_file(const std::filesystem::path& path) {
    check_file_size(path, side_file_cap(path));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw_input_error(path.string(), "", "cannot open file");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw_input_error(path.string(), "", "read error");
    return text;
}

nlohmann::json read_json(const std::filesystem::path& path) {
    const std::string text = read_side_file(path);
    nlohmann::json root = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (root.is_discarded()) throw_input_error(path.string(), "", "not valid JSON");
    return root;
}

nlohmann::json read_json_object(const std::filesystem::path& path) {
    nlohmann::json root = read_json(path);
    if (!root.is_object())
        throw_input_error(path.string(), "", "expected a JSON object at the top level");
    return root;
}

}  // namespace rebox::detail
