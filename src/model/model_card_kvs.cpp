// Metadata.set_gguf_meta_model of gguf-py: the loaded model-card fields as typed GGUF KVs (see
// model_card_metadata.hpp), refusing what gguf-py's writer could not write.
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "model/model_card_metadata.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

using nlohmann::json;

// Python's truth value of a JSON/YAML value: None, False, 0, "", [] and {} are false.
bool python_truthy(const json& value) {
    if (value.is_null()) return false;
    if (value.is_boolean()) return value.get<bool>();
    if (value.is_number()) return value.get<double>() != 0.0;
    if (value.is_string() || value.is_array() || value.is_object()) return !value.empty();
    return true;
}

std::string describe(const json& value) {
    std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
    if (text.size() > 60) text = text.substr(0, 57) + "...";
    return text;
}

class KvWriter {
  public:
    explicit KvWriter(const CardMetadata& metadata) : metadata_(metadata) {}

    const json* get(const std::string& field) const {
        const auto it = metadata_.fields.find(field);
        if (it == metadata_.fields.end() || it->is_null()) return nullptr;
        return &*it;
    }

    [[noreturn]] void refuse(const std::string& field, const std::string& key, const json& value,
                             const std::string& wanted) const {
        const auto origin = metadata_.origin.find(field);
        std::string file = "the model card";
        std::string problem = describe(value) + " is not " + wanted;
        if (origin != metadata_.origin.end() && origin->is_object()) {
            file = origin->value("file", file);
            const std::string source_key = origin->value("key", std::string());
            if (!source_key.empty()) problem = "(from its '" + source_key + "') " + problem;
        }
        throw_input_error(file, key, problem,
                          wanted + " (quote it in README.md, or set " + key + " with --metadata)");
    }

    // gguf-py add_string: a false value (empty text, 0, an empty list) is not written.
    void add_string(const std::string& key, const std::string& field, const json& value) {
        if (!python_truthy(value)) return;
        if (!value.is_string()) refuse(field, key, value, "text");
        add(key, GgufValue::str(value.get<std::string>()));
    }
    void add_string_field(const std::string& key, const std::string& field) {
        if (const json* value = get(field)) add_string(key, field, *value);
    }
    void add_int32(const std::string& key, const std::string& field) {
        const json* value = get(field);
        if (value == nullptr) return;
        if (!(value->is_number_integer() || value->is_boolean()))
            refuse(field, key, *value, "an integer");
        const int64_t number =
            value->is_boolean() ? int64_t{value->get<bool>()} : value->get<int64_t>();
        if (number < std::numeric_limits<int32_t>::min() ||
            number > std::numeric_limits<int32_t>::max() ||
            (value->is_number_unsigned() && value->get<uint64_t>() > INT32_MAX))
            refuse(field, key, *value, "an integer in the INT32 range");
        add(key, GgufValue::i32(static_cast<int32_t>(number)));
    }
    void add_float32(const std::string& key, const std::string& field) {
        const json* value = get(field);
        if (value == nullptr) return;
        if (!(value->is_number() || value->is_boolean())) refuse(field, key, *value, "a number");
        const double number =
            value->is_boolean() ? double(value->get<bool>()) : value->get<double>();
        const float rounded = static_cast<float>(number);
        if (std::isinf(rounded) && !std::isinf(number))
            refuse(field, key, *value, "a number in the FLOAT32 range");
        add(key, GgufValue::f32(rounded));
    }
    void add_u32(const std::string& key, uint32_t number) { add(key, GgufValue::u32(number)); }
    // gguf-py add_array of strings: an empty list is not written.
    void add_strings(const std::string& key, const std::string& field) {
        const json* value = get(field);
        if (value == nullptr) return;
        if (!value->is_array()) refuse(field, key, *value, "a list of text");
        if (value->empty()) return;
        std::vector<std::string> items;
        for (const json& item : *value) {
            if (!item.is_string()) refuse(field, key, item, "text (every item of the list)");
            items.push_back(item.get<std::string>());
        }
        add(key, GgufValue::string_array(std::move(items)));
    }
    // base_models / datasets: the count, then each entry's known keys in gguf-py's order.
    void add_sources(const std::string& prefix, const std::string& field) {
        const json* value = get(field);
        if (value == nullptr) return;
        if (!value->is_array()) refuse(field, prefix + ".count", *value, "a list of objects");
        add_u32(prefix + ".count", static_cast<uint32_t>(value->size()));
        static const char* const kEntryKeys[] = {"name",         "author",      "version",
                                                 "organization", "description", "url",
                                                 "doi",          "uuid",        "repo_url"};
        for (size_t i = 0; i < value->size(); ++i) {
            const json& entry = (*value)[i];
            const std::string entry_prefix = prefix + "." + std::to_string(i) + ".";
            if (!entry.is_object()) refuse(field, entry_prefix + "*", entry, "an object");
            for (const char* entry_key : kEntryKeys)
                if (entry.contains(entry_key))
                    add_string(entry_prefix + entry_key, field, entry[entry_key]);
        }
    }
    void add_license() {
        const json* value = get("license");
        if (value == nullptr) return;
        if (!value->is_array()) return add_string("general.license", "license", *value);
        std::string joined;  // a list of licenses joined with ","
        for (size_t i = 0; i < value->size(); ++i) {
            if (!(*value)[i].is_string())
                refuse("license", "general.license", (*value)[i], "text (every license)");
            if (i > 0) joined += ',';
            joined += (*value)[i].get<std::string>();
        }
        add_string("general.license", "license", joined);
    }

    std::vector<GgufKV> take() { return std::move(kvs_); }

  private:
    void add(const std::string& key, GgufValue value) { kvs_.push_back({key, std::move(value)}); }

    const CardMetadata& metadata_;
    std::vector<GgufKV> kvs_;
};

}  // namespace

std::vector<GgufKV> card_metadata_kvs(const CardMetadata& metadata) {
    std::vector<GgufKV> kvs;
    kvs.push_back({"general.type", GgufValue::str("model")});  // the converter's set_type()
    KvWriter body(metadata);
    body.add_string_field("general.sampling.sequence", "sampling_sequence");
    body.add_int32("general.sampling.top_k", "sampling_top_k");
    body.add_float32("general.sampling.top_p", "sampling_top_p");
    body.add_float32("general.sampling.min_p", "sampling_min_p");
    body.add_float32("general.sampling.xtc_probability", "sampling_xtc_probability");
    body.add_float32("general.sampling.xtc_threshold", "sampling_xtc_threshold");
    body.add_float32("general.sampling.temp", "sampling_temp");
    body.add_int32("general.sampling.penalty_last_n", "sampling_penalty_last_n");
    body.add_float32("general.sampling.penalty_repeat", "sampling_penalty_repeat");
    body.add_int32("general.sampling.mirostat", "sampling_mirostat");
    body.add_float32("general.sampling.mirostat_tau", "sampling_mirostat_tau");
    body.add_float32("general.sampling.mirostat_eta", "sampling_mirostat_eta");
    const std::pair<const char*, const char*> strings[] = {
        {"general.name", "name"},
        {"general.author", "author"},
        {"general.version", "version"},
        {"general.organization", "organization"},
        {"general.finetune", "finetune"},
        {"general.basename", "basename"},
        {"general.description", "description"},
        {"general.quantized_by", "quantized_by"},
        {"general.size_label", "size_label"},
    };
    for (const auto& [key, field] : strings) body.add_string_field(key, field);
    body.add_license();
    const std::pair<const char*, const char*> more_strings[] = {
        {"general.license.name", "license_name"},
        {"general.license.link", "license_link"},
        {"general.url", "url"},
        {"general.doi", "doi"},
        {"general.uuid", "uuid"},
        {"general.repo_url", "repo_url"},
        {"general.source.url", "source_url"},
        {"general.source.doi", "source_doi"},
        {"general.source.uuid", "source_uuid"},
        {"general.source.repo_url", "source_repo_url"},
    };
    for (const auto& [key, field] : more_strings) body.add_string_field(key, field);
    body.add_sources("general.base_model", "base_models");
    body.add_sources("general.dataset", "datasets");
    body.add_strings("general.tags", "tags");
    body.add_strings("general.languages", "languages");
    for (GgufKV& kv : body.take()) kvs.push_back(std::move(kv));
    return kvs;
}

}  // namespace rebox
