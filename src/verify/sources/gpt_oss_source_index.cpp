// verify's gpt-oss source index (gpt_oss_source_index.hpp): pairs, checks and names the MXFP4
// expert tensors and their biases; the rest are plain float entries.
#include "verify/sources/gpt_oss_source_index.hpp"

#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "model/json_file.hpp"
#include "rebox/error.hpp"

namespace rebox::verify_ref {
namespace {

struct Part {
    const SafetensorsFile* file = nullptr;
    const StTensorInfo* info = nullptr;
};

bool strip_suffix(const std::string& name, std::string_view suffix, std::string* stem) {
    if (name.size() <= suffix.size() || !name.ends_with(suffix)) return false;
    *stem = name.substr(0, name.size() - suffix.size());
    return true;
}

// Keeps the even (parity 0) or odd (1) rows of dim 1 of an entry bound over the whole tensor.
void keep_half(SourceTensor& entry, unsigned parity) {
    if (!entry.problem.empty()) return;
    if (entry.shape.size() < 2 || entry.shape[1] % 2 != 0) {
        entry.problem = error_message(
            entry.file, entry.name,
            "shape " + shape_text(entry.shape) + " has no even dim 1 of interleaved gate/up rows");
        return;
    }
    uint64_t width = 1;
    for (size_t i = 2; i < entry.shape.size(); ++i) width *= static_cast<uint64_t>(entry.shape[i]);
    entry.shape[1] /= 2;
    entry.element_count /= 2;
    entry.deinterleave = static_cast<uint8_t>(parity + 1);
    entry.deinterleave_row_values = width;
}

// An MXFP4 entry from its two parts, every scale byte checked (E8M0 0xFF is NaN).
SourceTensor bind_mxfp4(const std::string& stem, const Part& blocks, const Part& scales) {
    SourceTensor entry;
    entry.name = stem;
    entry.quantized = true;
    entry.fp4 = true;
    const Part& any = blocks.info ? blocks : scales;
    entry.file = any.file->display_name();
    if (!blocks.info || !scales.info) {
        entry.problem = error_message(
            entry.file, any.info->name,
            std::string("no ") + (blocks.info ? "_scales" : "_blocks") + " tensor to pair with");
        return entry;
    }
    const std::vector<int64_t>& bs = blocks.info->shape;
    const std::vector<int64_t>& ss = scales.info->shape;
    if (blocks.info->dtype != StDtype::U8 || scales.info->dtype != StDtype::U8 || bs.size() != 4 ||
        bs[3] != 16 || ss.size() != 3 || ss[0] != bs[0] || ss[1] != bs[1] || ss[2] != bs[2]) {
        entry.problem =
            error_message(entry.file, stem,
                          "_blocks " + shape_text(bs) + " / _scales " + shape_text(ss) +
                              " (dtypes " + std::string(st_dtype_name(blocks.info->dtype)) + ", " +
                              std::string(st_dtype_name(scales.info->dtype)) + ")",
                          "U8 [E, rows, n, 16] and U8 [E, rows, n]");
        return entry;
    }
    entry.shape = {bs[0], bs[1], bs[2] * 32};
    entry.element_count = static_cast<uint64_t>(bs[0]) * bs[1] * bs[2] * 32;
    entry.fp4_source.nvfp4 = false;
    entry.fp4_source.group = 32;
    entry.fp4_source.codes = blocks.file->data(*blocks.info);
    entry.fp4_source.scales = scales.file->data(*scales.info);
    if (entry.fp4_source.codes.size() != entry.element_count / 2 ||
        entry.fp4_source.scales.size() != entry.element_count / 32) {
        entry.problem = error_message(entry.file, stem, "data sizes disagree with the shapes");
        return entry;
    }
    for (size_t i = 0; i < entry.fp4_source.scales.size(); ++i)
        if (entry.fp4_source.scales[i] == 0xFF) {
            entry.problem =
                error_message(scales.file->display_name(), scales.info->name,
                              "E8M0 scale byte 0xff (NaN) at index " + std::to_string(i));
            return entry;
        }
    return entry;
}

}  // namespace

bool is_gpt_oss_source(const std::filesystem::path& config_path) {
    rebox::detail::check_file_size(config_path, rebox::detail::kMaxConfigBytes);
    std::ifstream in(config_path, std::ios::binary);
    if (!in) return false;
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const nlohmann::json root = nlohmann::json::parse(text, nullptr, false);
    if (root.is_discarded() || !root.is_object()) return false;
    const auto block = root.find("quantization_config");
    if (block == root.end() || !block->is_object()) return false;
    const auto method = block->find("quant_method");
    return method != block->end() && method->is_string() && *method == "mxfp4";
}

SourceIndex index_gpt_oss_source(const SafetensorsModel& model) {
    SourceIndex index;
    std::map<std::string, std::pair<Part, Part>> pairs;  // stem -> blocks, scales
    for (const auto& file : model.files()) {
        for (const StTensorInfo& info : file->tensors()) {
            std::string stem;
            if (strip_suffix(info.name, "_blocks", &stem)) {
                pairs[stem].first = {file.get(), &info};
                continue;
            }
            if (strip_suffix(info.name, "_scales", &stem)) {
                pairs[stem].second = {file.get(), &info};
                continue;
            }
            SourceTensor entry;
            entry.name = info.name;
            entry.file = file->display_name();
            entry.shape = info.shape;
            entry.element_count = info.element_count();
            bind_plain(*file, info, entry);
            if (info.name.ends_with("self_attn.sinks")) {
                entry.name += ".weight";
            } else if (strip_suffix(info.name, "gate_up_proj_bias", &stem)) {
                SourceTensor up = entry;
                entry.name = stem + "gate_proj.bias";
                up.name = stem + "up_proj.bias";
                keep_half(entry, 0);
                keep_half(up, 1);
                index.entries.push_back(std::move(up));
            } else if (strip_suffix(info.name, "down_proj_bias", &stem)) {
                entry.name = stem + "down_proj.bias";
            }
            index.entries.push_back(std::move(entry));
        }
    }
    for (const auto& [stem, parts] : pairs) {
        SourceTensor entry = bind_mxfp4(stem, parts.first, parts.second);
        std::string head;
        if (strip_suffix(stem, "gate_up_proj", &head)) {
            SourceTensor up = entry;
            entry.name = head + "gate_proj.weight";
            up.name = head + "up_proj.weight";
            keep_half(entry, 0);
            keep_half(up, 1);
            index.entries.push_back(std::move(up));
        } else {
            entry.name = stem + ".weight";
        }
        index.entries.push_back(std::move(entry));
    }
    for (size_t i = 0; i < index.entries.size(); ++i) add_by_stripped_name(index, i);
    return index;
}

}  // namespace rebox::verify_ref
