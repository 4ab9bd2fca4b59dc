// Pairs the parts of each GPTQ / AWQ / compressed-tensors module (binders in
// prequant_bind_gptq_awq.cpp and prequant_bind_ct.cpp, docs/formats.md §5): a part that disagrees
// is a problem on the entry, naming the tensor and what was expected; an orphan part is a problem
// of the index.
#include "verify/sources/prequant_source_index.hpp"

#include <set>

#include "rebox/error.hpp"
#include "verify/sources/prequant_parts.hpp"

namespace rebox::verify_ref {
namespace {

std::string strip(const std::string& name, std::string_view suffix) {
    if (name.size() > suffix.size() && name.ends_with(suffix))
        return name.substr(0, name.size() - suffix.size());
    return "";
}

// The suffixes that are parts of a quantized module (never entries of their own).
const std::vector<std::string_view>& part_suffixes(PrequantMethod method) {
    static const std::vector<std::string_view> gptq_awq = {".qzeros", ".scales", ".g_idx"};
    static const std::vector<std::string_view> ct = {".weight_scale", ".weight_zero_point",
                                                     ".weight_shape", ".weight_g_idx"};
    return method == PrequantMethod::compressed_tensors ? ct : gptq_awq;
}

}  // namespace

bool is_prequant_source(const SafetensorsModel& model, const PrequantConfig& config) {
    if (config.method == PrequantMethod::none) return false;
    for (const auto& file : model.files())
        if (file->metadata().count("mcq")) return false;
    return true;
}

SourceIndex index_prequant_source(const SafetensorsModel& model, const PrequantConfig& config) {
    Parts parts;
    for (const auto& file : model.files())
        for (const StTensorInfo& info : file->tensors()) parts[info.name] = {file.get(), &info};
    const bool ct = config.method == PrequantMethod::compressed_tensors;
    const std::string_view main_suffix = ct ? ".weight_packed" : ".qweight";

    SourceIndex index;
    if (!config.problem.empty()) index.problems.push_back("config.json: " + config.problem);
    if (config.method == PrequantMethod::unknown) {  // no layout to read: every tensor as stored
        for (const auto& [name, part] : parts) {
            SourceTensor entry;
            entry.name = name;
            entry.file = part.file->display_name();
            entry.shape = part.info->shape;
            entry.element_count = part.info->element_count();
            bind_plain(*part.file, *part.info, entry);
            index.entries.push_back(std::move(entry));
        }
        for (size_t i = 0; i < index.entries.size(); ++i) add_by_stripped_name(index, i);
        return index;
    }
    std::set<std::string> modules_seen;
    for (const auto& [name, part] : parts) {
        const std::string& file_name = part.file->display_name();
        bool is_part = false;
        for (std::string_view suffix : part_suffixes(config.method)) {
            const std::string module = strip(name, suffix);
            if (module.empty()) continue;
            is_part = true;
            const Part* int8_weight = ct ? find_part(parts, module + ".weight") : nullptr;
            const bool has_main = find_part(parts, module + std::string(main_suffix)) ||
                                  (int8_weight && int8_weight->info->dtype == StDtype::I8 &&
                                   (suffix == ".weight_scale" || suffix == ".weight_zero_point"));
            if (!has_main)
                index.problems.push_back(
                    error_message(file_name, name,
                                  "has no " + module + std::string(main_suffix) + " to belong to"));
        }
        if (is_part) continue;

        SourceTensor entry;
        entry.file = file_name;
        std::string module = strip(name, main_suffix);
        const Part* ct_int8_scale = nullptr;
        if (module.empty() && ct) {
            const std::string base = strip(name, ".weight");
            if (!base.empty() && part.info->dtype == StDtype::I8)
                ct_int8_scale = find_part(parts, base + ".weight_scale");
            if (ct_int8_scale) module = base;
        }
        if (module.empty()) {  // a plain tensor
            entry.name = name;
            entry.shape = part.info->shape;
            entry.element_count = part.info->element_count();
            bind_plain(*part.file, *part.info, entry);
            index.entries.push_back(std::move(entry));
            continue;
        }
        entry.name = module + ".weight";
        entry.quantized = true;
        entry.prequant = true;
        if (find_part(parts, entry.name) && !ct_int8_scale)
            entry.problem = error_message(file_name, entry.name,
                                          "stored next to " + name +
                                              " (a module is quantized "
                                              "or not)");
        else if (!config.problem.empty())
            entry.problem = error_message("config.json", config.field, config.problem);
        else if (config.method == PrequantMethod::gptq)
            bind_gptq(config, module, parts, part, entry);
        else if (config.method == PrequantMethod::awq && config.awq_gemv)
            bind_awq_gemv(config, module, parts, part, entry);
        else if (config.method == PrequantMethod::awq)
            bind_awq(config, module, parts, part, entry);
        else if (ct_int8_scale)
            bind_ct_int8(config, module, parts, part, *ct_int8_scale, entry);
        else
            bind_ct_packed(config, module, parts, part, entry);
        if (entry.problem.empty()) {
            entry.shape = {static_cast<int64_t>(entry.pq.out), static_cast<int64_t>(entry.pq.in)};
            entry.element_count = entry.pq.out * entry.pq.in;
        }
        index.entries.push_back(std::move(entry));
    }
    for (size_t i = 0; i < index.entries.size(); ++i) add_by_stripped_name(index, i);
    return index;
}

}  // namespace rebox::verify_ref
