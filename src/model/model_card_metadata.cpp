// Metadata.load of gguf-py, in its order: model card heuristics, config.json _name_or_path, the
// directory name, generation_config.json sampling values, the override file, --name; then the
// converter's name and size-label fallbacks (see model_card_metadata.hpp).
#include "model/model_card_metadata.hpp"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <regex>
#include <utility>

#include "model/json_file.hpp"
#include "model/model_card.hpp"
#include "model/model_id_parts.hpp"
#include "rebox/error.hpp"

namespace rebox {
namespace {

using nlohmann::json;

class MetadataBuilder {
  public:
    explicit MetadataBuilder(CardMetadata* metadata) : metadata_(metadata) {}

    bool is_none(const std::string& field) const {
        const auto it = metadata_->fields.find(field);
        return it == metadata_->fields.end() || it->is_null();
    }
    // file: where the value came from; source_key: its key there ("" for a computed value).
    void set(const std::string& field, json value, const std::string& file,
             const std::string& source_key = "") {
        metadata_->fields[field] = std::move(value);
        metadata_->origin[field] = {{"file", file}, {"key", source_key}};
    }
    json& field(const std::string& name) { return metadata_->fields[name]; }

  private:
    CardMetadata* metadata_;
};

bool starts_with_url_scheme(const std::string& text) {
    return text.starts_with("http://") || text.starts_with("https://") ||
           text.starts_with("ssh://");
}

// A base_model / datasets entry as the converter turns it into a dict: a URL (with name,
// organization and version when it is a Hugging Face one), a Hugging Face id, or a mapping as is.
json source_entry(const json& entry, int64_t total_params) {
    json out = json::object();
    if (entry.is_object()) return entry;
    if (!entry.is_string()) return out;  // "not in a known format": an empty entry
    const std::string id = entry.get<std::string>();
    const auto fill = [&](const ModelIdParts& parts) {
        if (parts.full_name) out["name"] = id_to_title(*parts.full_name);
        if (parts.organization) out["organization"] = id_to_title(*parts.organization);
        if (parts.version) out["version"] = *parts.version;
    };
    if (starts_with_url_scheme(id)) {
        out["repo_url"] = id;
        static const std::regex kHfUrl(R"(https?://huggingface.co/([^/]+/[^/]+))");
        std::smatch match;
        if (id.find("huggingface.co") != std::string::npos && std::regex_match(id, match, kHfUrl))
            fill(model_id_parts(match[1].str(), total_params));
        return out;
    }
    const ModelIdParts parts = model_id_parts(id, total_params);
    fill(parts);
    if (parts.organization && parts.full_name)
        out["repo_url"] = "https://huggingface.co/" + *parts.organization + "/" + *parts.full_name;
    return out;
}

// base_model / base_models / base_model_sources (or datasets / dataset / dataset_sources): the
// first key present gives the list, a single string becoming one entry.
void use_source_list(MetadataBuilder& builder, const json& card, const std::string& card_file,
                     const char* field, const std::array<const char*, 3>& keys,
                     int64_t total_params) {
    const char* present = nullptr;
    for (const char* key : keys)
        if (card.contains(key) && present == nullptr) present = key;
    if (present == nullptr) return;
    std::vector<json> ids;
    const json& value = card[present];
    if (value.is_string()) ids.push_back(value);
    if (value.is_array())
        for (const json& item : value) ids.push_back(item);
    if (builder.is_none(field)) builder.set(field, json::array(), card_file, present);
    for (const json& id : ids) builder.field(field).push_back(source_entry(id, total_params));
}

void apply_card(MetadataBuilder& builder, const json& card, const std::string& card_file,
                int64_t total_params) {
    const auto use = [&](const char* field, const char* key) {
        if (card.contains(key) && builder.is_none(field))
            builder.set(field, card[key], card_file, key);
    };
    const auto use_array = [&](const char* field, const char* key) {  // appends
        if (!card.contains(key) || card[key].is_null()) return;
        json current = builder.is_none(field) ? json::array() : builder.field(field);
        const json& value = card[key];
        if (value.is_string()) current.push_back(value);
        if (value.is_array())
            for (const json& item : value) current.push_back(item);
        builder.set(field, std::move(current), card_file, key);
    };
    const std::pair<const char*, const char*> direct[] = {
        {"name", "name"},
        {"author", "author"},
        {"version", "version"},
        {"organization", "organization"},
        {"description", "description"},
        {"finetune", "finetune"},
        {"basename", "basename"},
        {"size_label", "size_label"},
        {"source_url", "url"},
        {"source_doi", "doi"},
        {"source_uuid", "uuid"},
        {"source_repo_url", "repo_url"},
        {"name", "model_name"},
        {"author", "model_author"},
        {"version", "model_version"},
        {"organization", "model_organization"},
        {"description", "model_description"},
        {"finetune", "model_finetune"},
        {"basename", "model_basename"},
        {"size_label", "model_size_label"},
        {"source_url", "model_url"},
        {"source_doi", "model_doi"},
        {"source_uuid", "model_uuid"},
        {"source_repo_url", "model_repo_url"},
        {"author", "model_creator"},  // e.g. TheBloke's cards
        {"basename", "model_type"},
    };
    for (const auto& [field, key] : direct) use(field, key);
    use_source_list(builder, card, card_file, "base_models",
                    {"base_model", "base_models", "base_model_sources"}, total_params);
    use_source_list(builder, card, card_file, "datasets",
                    {"datasets", "dataset", "dataset_sources"}, total_params);
    use("license", "license");
    use("license_name", "license_name");
    use("license_link", "license_link");
    use_array("tags", "tags");
    use_array("tags", "pipeline_tag");
    use_array("languages", "languages");
    use_array("languages", "language");
}

// _name_or_path and the directory name: only fields still None are filled.
void apply_model_id(MetadataBuilder& builder, const std::string& model_id, int64_t total_params,
                    const std::string& file, const std::string& source_key) {
    const ModelIdParts parts = model_id_parts(model_id, total_params);
    const auto fill = [&](const char* field, const std::optional<std::string>& value) {
        if (builder.is_none(field) && value) builder.set(field, *value, file, source_key);
    };
    fill("name", parts.full_name ? std::optional(id_to_title(*parts.full_name)) : std::nullopt);
    fill("organization",
         parts.organization ? std::optional(id_to_title(*parts.organization)) : std::nullopt);
    fill("basename", parts.basename);
    fill("finetune", parts.finetune);
    fill("version", parts.version);
    fill("size_label", parts.size_label);
}

void apply_generation_config(MetadataBuilder& builder, const std::filesystem::path& dir) {
    const std::filesystem::path path = dir / "generation_config.json";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return;
    // Not every model has a valid generation_config.json: the converter ignores one that is not.
    const json config = json::parse(detail::read_side_file(path), nullptr, false);
    if (!config.is_object()) return;
    const std::pair<const char*, const char*> keys[] = {
        {"sampling_sequence", "sequence"},
        {"sampling_top_k", "top_k"},
        {"sampling_top_p", "top_p"},
        {"sampling_min_p", "min_p"},
        {"sampling_xtc_probability", "xtc_probability"},
        {"sampling_xtc_threshold", "xtc_threshold"},
        {"sampling_temp", "temperature"},
        {"sampling_penalty_last_n", "penalty_last_n"},
        {"sampling_penalty_repeat", "penalty_repeat"},
        {"sampling_mirostat", "mirostat"},
        {"sampling_mirostat_tau", "mirostat_tau"},
        {"sampling_mirostat_eta", "mirostat_eta"},
    };
    for (const auto& [field, key] : keys)
        if (config.contains(key)) builder.set(field, config[key], path.string(), key);
    if (!config.contains("penalty_repeat") && config.contains("repetition_penalty"))
        builder.set("sampling_penalty_repeat", config["repetition_penalty"], path.string(),
                    "repetition_penalty");
}

void apply_overrides(MetadataBuilder& builder, const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw_input_error(path.string(), "", "is not a readable file",
                          "give --metadata a JSON file of general.* keys");
    const json overrides = detail::read_json_object(path);
    // The KV names llama.cpp uses, and the two plural list keys; general.license is not read.
    const std::pair<const char*, const char*> keys[] = {
        {"sampling_sequence", "general.sampling.sequence"},
        {"sampling_top_k", "general.sampling.top_k"},
        {"sampling_top_p", "general.sampling.top_p"},
        {"sampling_min_p", "general.sampling.min_p"},
        {"sampling_xtc_probability", "general.sampling.xtc_probability"},
        {"sampling_xtc_threshold", "general.sampling.xtc_threshold"},
        {"sampling_temp", "general.sampling.temp"},
        {"sampling_penalty_last_n", "general.sampling.penalty_last_n"},
        {"sampling_penalty_repeat", "general.sampling.penalty_repeat"},
        {"sampling_mirostat", "general.sampling.mirostat"},
        {"sampling_mirostat_tau", "general.sampling.mirostat_tau"},
        {"sampling_mirostat_eta", "general.sampling.mirostat_eta"},
        {"name", "general.name"},
        {"author", "general.author"},
        {"version", "general.version"},
        {"organization", "general.organization"},
        {"finetune", "general.finetune"},
        {"basename", "general.basename"},
        {"description", "general.description"},
        {"quantized_by", "general.quantized_by"},
        {"size_label", "general.size_label"},
        {"license_name", "general.license.name"},
        {"license_link", "general.license.link"},
        {"url", "general.url"},
        {"doi", "general.doi"},
        {"uuid", "general.uuid"},
        {"repo_url", "general.repo_url"},
        {"source_url", "general.source.url"},
        {"source_doi", "general.source.doi"},
        {"source_uuid", "general.source.uuid"},
        {"source_repo_url", "general.source.repo_url"},
        {"base_models", "general.base_models"},
        {"datasets", "general.datasets"},
        {"tags", "general.tags"},
        {"languages", "general.languages"},
    };
    for (const auto& [field, key] : keys)
        if (overrides.contains(key)) builder.set(field, overrides[key], path.string(), key);
}

}  // namespace

std::string model_dir_name(const std::filesystem::path& dir) {
    std::filesystem::path path = dir.lexically_normal();
    std::string name = path.filename().string();
    if (name.empty() && path.has_parent_path()) name = path.parent_path().filename().string();
    if (name.empty() || name == "." || name == "..") {
        std::error_code ec;
        const std::filesystem::path absolute =
            std::filesystem::absolute(dir, ec).lexically_normal();
        if (!ec) {
            name = absolute.filename().string();
            if (name.empty()) name = absolute.parent_path().filename().string();
        }
    }
    return name;
}

CardMetadata load_card_metadata(const CardMetadataSources& sources) {
    CardMetadata metadata;
    MetadataBuilder builder(&metadata);
    const ParameterCounts counts = count_parameters(sources.tensors);
    const int64_t total_params = counts.total;

    apply_card(builder, read_model_card(sources.model_dir),
               (sources.model_dir / "README.md").string(), total_params);

    const std::filesystem::path config_path = sources.model_dir / "config.json";
    std::error_code ec;
    if (std::filesystem::is_regular_file(config_path, ec)) {
        const json config = detail::read_json_object(config_path);
        if (const auto it = config.find("_name_or_path"); it != config.end() && !it->is_null()) {
            if (!it->is_string())
                throw_input_error(config_path.string(), "_name_or_path", "is not a string",
                                  "the model's Hugging Face id as text, or no _name_or_path");
            const std::string id = it->get<std::string>();
            // Only a model id ("org/name"), not a path on someone's computer.
            if (std::count(id.begin(), id.end(), '/') <= 1)
                apply_model_id(builder, id, total_params, config_path.string(), "_name_or_path");
        }
    }
    apply_model_id(builder, model_dir_name(sources.model_dir), total_params,
                   sources.model_dir.string(), "");
    apply_generation_config(builder, sources.model_dir);
    if (sources.overrides_file) apply_overrides(builder, *sources.overrides_file);
    if (!sources.name.empty()) builder.set("name", sources.name, "--name");

    if (builder.is_none("name"))
        builder.set("name", model_dir_name(sources.model_dir), sources.model_dir.string());
    if (builder.is_none("size_label") && total_params > 0)
        builder.set("size_label", size_label(counts), sources.model_dir.string());
    return metadata;
}

}  // namespace rebox
