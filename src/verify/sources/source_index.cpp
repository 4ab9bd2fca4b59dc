// Builds verify's source index: groups .qcodes/.scales/.mins into quantized tensors, checks each
// against its mcq metadata entry (dtype and exact byte sizes, zero padding bits), and widens
// nothing yet (values are computed chunk by chunk later).
#include "verify/sources/source_index.hpp"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "arch/tensor_names.hpp"
#include "rebox/error.hpp"
#include "verify/values/ref_lsb0.hpp"

namespace rebox::verify_ref {

std::string shape_text(const std::vector<int64_t>& shape) {
    std::string text = "[";
    for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
    return text + "]";
}

bool source_float(StDtype dtype, SourceFloat* out) {
    switch (dtype) {
        case StDtype::F32:
            return *out = SourceFloat::F32, true;
        case StDtype::F16:
            return *out = SourceFloat::F16, true;
        case StDtype::BF16:
            return *out = SourceFloat::BF16, true;
        default:
            return false;
    }
}

namespace {

constexpr std::string_view kSuffixes[] = {".qcodes", ".scales", ".mins"};

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() > suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

struct Triple {
    const StTensorInfo* parts[3] = {nullptr, nullptr, nullptr};  // qcodes, scales, mins
};

// Fills entry.quant from the triple and the metadata entry, or sets entry.problem.
void bind_quantized(const SafetensorsFile& file, const Triple& triple, const mcq::Entry& meta,
                    SourceTensor& entry) {
    const StTensorInfo& qcodes = *triple.parts[0];
    const StTensorInfo& scales = *triple.parts[1];
    const StTensorInfo& mins = *triple.parts[2];
    const uint64_t n = meta.element_count;
    const uint64_t code_bytes = (n * meta.bits + 7) / 8;
    const uint64_t groups = n / meta.group;
    if (qcodes.dtype != StDtype::U8 || file.data(qcodes).size() != code_bytes) {
        entry.problem =
            error_message(file.display_name(), entry.name + ".qcodes",
                          "wrong dtype or size (" + std::string(st_dtype_name(qcodes.dtype)) +
                              ", " + std::to_string(file.data(qcodes).size()) + " bytes)",
                          "U8, " + std::to_string(code_bytes) + " bytes");
        return;
    }
    for (const StTensorInfo* part : {&scales, &mins}) {
        if (part->dtype != StDtype::F16 || file.data(*part).size() != groups * 2) {
            entry.problem =
                error_message(file.display_name(), part->name,
                              "wrong dtype or size (" + std::string(st_dtype_name(part->dtype)) +
                                  ", " + std::to_string(file.data(*part).size()) + " bytes)",
                              "F16, " + std::to_string(groups) + " values");
            return;
        }
    }
    entry.quant =
        QuantView{file.data(qcodes), file.data(scales), file.data(mins), meta.bits, meta.group};
    if (!lsb0_padding_is_zero(entry.quant.qcodes, meta.bits, n))
        entry.problem = error_message(file.display_name(), entry.name + ".qcodes",
                                      "non-zero padding bits after the last code");
}

}  // namespace

void bind_plain(const SafetensorsFile& file, const StTensorInfo& info, SourceTensor& entry) {
    size_t value_size = 0;
    switch (info.dtype) {
        case StDtype::F32:
            entry.float_dtype = SourceFloat::F32, value_size = 4;
            break;
        case StDtype::F16:
            entry.float_dtype = SourceFloat::F16, value_size = 2;
            break;
        case StDtype::BF16:
            entry.float_dtype = SourceFloat::BF16, value_size = 2;
            break;
        default:
            entry.problem =
                error_message(file.display_name(), info.name,
                              "unsupported source dtype " + std::string(st_dtype_name(info.dtype)),
                              "F32, F16 or BF16");
            return;
    }
    entry.float_data = file.data(info);
    if (entry.float_data.size() / value_size != entry.element_count ||
        entry.float_data.size() % value_size != 0)
        entry.problem = error_message(file.display_name(), info.name,
                                      "data size disagrees with shape", shape_text(info.shape));
}

namespace {

void index_file(const SafetensorsFile& file, SourceIndex& index) {
    const std::string& file_name = file.display_name();
    std::map<std::string, Triple> triples;
    std::vector<const StTensorInfo*> plain;
    for (const StTensorInfo& info : file.tensors()) {
        bool part = false;
        for (int k = 0; k < 3; ++k) {
            if (ends_with(info.name, kSuffixes[k])) {
                triples[info.name.substr(0, info.name.size() - kSuffixes[k].size())].parts[k] =
                    &info;
                part = true;
            }
        }
        if (!part) plain.push_back(&info);
    }

    mcq::FileMetadata metadata;
    const auto mcq = file.metadata().find("mcq");
    if (mcq != file.metadata().end())
        metadata = mcq::parse_file_metadata(mcq->second, file_name, index.problems);
    std::set<std::string> used_metadata;
    // The metadata's names without "model.", for a triple spelled the other way (built once).
    std::unordered_map<std::string, const std::string*> metadata_by_stripped;
    for (const auto& [name, meta] : metadata.entries)
        metadata_by_stripped.emplace(strip_model_prefix(name), &name);

    for (const auto& [base, triple] : triples) {
        SourceTensor entry;
        entry.name = base;
        entry.file = file_name;
        entry.quantized = true;
        for (int k = 0; k < 3; ++k) {
            if (triple.parts[k] == nullptr && entry.problem.empty())
                entry.problem = error_message(file_name, base + std::string(kSuffixes[k]),
                                              "part of the quantized triple is missing");
        }
        auto meta = metadata.entries.find(base);
        if (meta == metadata.entries.end()) {  // the metadata may spell it with/without model.
            const auto other = metadata_by_stripped.find(strip_model_prefix(base));
            if (other != metadata_by_stripped.end()) meta = metadata.entries.find(*other->second);
        }
        if (meta == metadata.entries.end()) {
            if (entry.problem.empty())
                entry.problem =
                    error_message(file_name, base, "quantized tensor has no mcq metadata entry",
                                  "an entry in __metadata__.mcq.tensors");
        } else {
            used_metadata.insert(meta->first);
            entry.shape = meta->second.shape;
            entry.element_count = meta->second.element_count;
            if (entry.problem.empty()) bind_quantized(file, triple, meta->second, entry);
        }
        index.entries.push_back(std::move(entry));
    }
    for (const auto& [name, meta] : metadata.entries) {
        if (!used_metadata.count(name))
            index.problems.push_back(error_message(
                file_name, name, "mcq metadata entry has no .qcodes/.scales/.mins tensors"));
    }
    for (const StTensorInfo* info : plain) {
        SourceTensor entry;
        entry.name = info->name;
        entry.file = file_name;
        entry.shape = info->shape;
        entry.element_count = info->element_count();
        bind_plain(file, *info, entry);
        index.entries.push_back(std::move(entry));
    }
}

}  // namespace

SourceIndex index_source(const SafetensorsModel& model) {
    SourceIndex index;
    for (const auto& file : model.files()) index_file(*file, index);
    for (size_t i = 0; i < index.entries.size(); ++i) add_by_stripped_name(index, i);
    return index;
}

void add_by_stripped_name(SourceIndex& index, size_t i) {
    const std::string key(strip_model_prefix(index.entries[i].name));
    if (!index.by_stripped_name.emplace(key, i).second)
        index.problems.push_back(error_message(
            index.entries[i].file, index.entries[i].name,
            "source tensor name given twice (with and without \"model.\" or in two shards)"));
}

uint32_t counted_mtp_layers(const SourceIndex& index, std::string_view prefix) {
    const std::string layers = std::string(prefix) + "layers.";
    uint32_t count = 0;
    for (const auto& [name, i] : index.by_stripped_name) {
        if (!name.starts_with(layers)) continue;
        const std::string_view rest = std::string_view(name).substr(layers.size());
        uint32_t k = 0;
        size_t digits = 0;
        while (digits < rest.size() && digits < 3 && rest[digits] >= '0' && rest[digits] <= '9')
            k = k * 10 + uint32_t(rest[digits++] - '0');
        if (digits > 0 && digits < rest.size() && rest[digits] == '.')
            count = std::max(count, k + 1);
    }
    return count;
}

}  // namespace rebox::verify_ref
