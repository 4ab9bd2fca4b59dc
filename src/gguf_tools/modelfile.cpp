// The Ollama Modelfile convert --modelfile writes beside its output (modelfile.hpp). Parameter
// names are the ones Ollama's Modelfile reference documents: stop, temperature, top_k, top_p,
// min_p, repeat_penalty (generation_config.json's repetition_penalty).
#include "gguf_tools/modelfile.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <span>
#include <utility>

#include "format/atomic_output.hpp"
#include "format/gguf_shards.hpp"
#include "model/json_file.hpp"
#include "rebox/version.hpp"

namespace rebox {
namespace {

// A Modelfile string argument: double-quoted, with \ and " escaped.
std::string quoted(const std::string& text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + '"';
}

bool printable(const std::string& text) {
    if (text.empty()) return false;
    for (unsigned char c : text)
        if (c < 0x20) return false;
    return true;
}

// The texts of the end-of-turn and end-of-sequence tokens (the GGUF's eot, then eos, then
// generation_config.json's eos_token_id, a number or a list), without repeats.
std::vector<std::string> stop_tokens(const GgufSet& set, const nlohmann::json& generation) {
    std::vector<std::string> stops;
    const GgufValue* tokens = set.find("tokenizer.ggml.tokens");
    if (tokens == nullptr || !tokens->is_array()) return stops;
    std::vector<uint64_t> ids;
    for (const char* key : {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eos_token_id"}) {
        const GgufValue* id = set.find(key);
        if (const auto index = id != nullptr ? id->as_u32() : std::nullopt) ids.push_back(*index);
    }
    if (const auto eos = generation.find("eos_token_id"); eos != generation.end()) {
        if (eos->is_number_unsigned()) ids.push_back(eos->get<uint64_t>());
        if (eos->is_array())
            for (const auto& id : *eos)
                if (id.is_number_unsigned()) ids.push_back(id.get<uint64_t>());
    }
    for (const uint64_t index : ids) {
        if (index >= tokens->array.size()) continue;
        const auto* text = std::get_if<std::string>(&tokens->array[index]);
        if (text == nullptr || !printable(*text)) continue;
        if (std::find(stops.begin(), stops.end(), *text) == stops.end()) stops.push_back(*text);
    }
    return stops;
}

}  // namespace

std::string ollama_modelfile(const std::vector<std::filesystem::path>& outputs,
                             const std::filesystem::path& generation_config,
                             const std::filesystem::path& mmproj) {
    std::string text = std::string("# written by rebox ") + version() +
                       "; ollama create NAME -f THIS_FILE (a split set needs Ollama >= 0.30.0" +
                       (mmproj.empty() ? "" : ", the projector FROM line Ollama >= 0.30.4") + ")\n";
    for (const auto& file : outputs) text += "FROM ./" + file.filename().string() + "\n";
    if (!mmproj.empty()) text += "FROM ./" + mmproj.filename().string() + "\n";
    const GgufSet set = GgufSet::open(outputs.front());
    const nlohmann::json config = std::filesystem::exists(generation_config)
                                      ? detail::read_json_object(generation_config)
                                      : nlohmann::json::object();
    for (const std::string& stop : stop_tokens(set, config))
        text += "PARAMETER stop " + quoted(stop) + "\n";
    {
        const std::pair<const char*, const char*> names[] = {
            {"temperature", "temperature"},
            {"top_k", "top_k"},
            {"top_p", "top_p"},
            {"min_p", "min_p"},
            {"repetition_penalty", "repeat_penalty"}};
        for (const auto& [field, parameter] : names) {
            const auto it = config.find(field);
            if (it == config.end() || !it->is_number()) continue;
            if (std::string(parameter) == "top_k" && !it->is_number_integer()) continue;
            text += std::string("PARAMETER ") + parameter + " " + it->dump() + "\n";
        }
    }
    return text;
}

std::filesystem::path modelfile_path(const std::filesystem::path& output) {
    std::filesystem::path path = output;
    return path.replace_extension(".Modelfile");
}

void write_modelfile(const std::filesystem::path& path, const std::string& text, bool force) {
    AtomicOutput out(path, force);
    out.pwrite(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()), 0);
    out.commit();
}

}  // namespace rebox
