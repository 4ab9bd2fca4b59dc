// Small-file JSON reading shared by config.json, modules.json and tokenizer_config.json.
#include "json_file.hpp"

#include <fstream>
#include <iterator>
#include <string>

#include "rebox/error.hpp"

namespace rebox::detail {

nlohmann::json read_json(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw_input_error(path.string(), "", "cannot open file");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw_input_error(path.string(), "", "read error");
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
