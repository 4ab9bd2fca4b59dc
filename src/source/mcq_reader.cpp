// read_mcq_model: safetensors files -> SourceModel. Each metadata entry becomes a quantized
// SourceTensor when its .qcodes/.scales/.mins in the same file pass every rule of the spec's
// "What a reader must refuse"; otherwise a Blocker names it and it is left out. bits/group/shape
// come from the metadata only; byte counts are checked against them, never used to infer them.
#include "source/mcq_reader.hpp"

#include <map>
#include <set>
#include <string_view>

#include "format/safetensors.hpp"
#include "format/shape_text.hpp"
#include "mcq_metadata.hpp"
#include "source_helpers.hpp"

namespace rebox {
namespace {

constexpr std::string_view kPartSuffixes[] = {".qcodes", ".scales", ".mins"};
constexpr int64_t kMaxCodes = int64_t{1} << 56;  // keeps N * bits far from overflow

// "<name>" when `tensor` is "<name>.qcodes" / ".scales" / ".mins".
std::optional<std::string> part_base(std::string_view tensor) {
    for (std::string_view suffix : kPartSuffixes)
        if (tensor.size() > suffix.size() && tensor.ends_with(suffix))
            return std::string(tensor.substr(0, tensor.size() - suffix.size()));
    return std::nullopt;
}

using detail::shape_text;
using source_detail::float_dtype;

constexpr const char* kReexportFix =
    "re-export the tensor as mcq-v1 (see the spec's metadata rules)";

// Validates one entry against its parts; returns the tensor or sets *blocker.
std::optional<SourceTensor> read_entry(const SafetensorsFile& file, const std::string& name,
                                       const mcq::Entry& entry, Blocker* blocker) {
    const std::string& file_name = file.display_name();
    auto refuse = [&](std::string reason, std::string fix = kReexportFix) {
        *blocker = Blocker{name, file_name + ": " + std::move(reason), std::move(fix)};
        return std::nullopt;
    };
    if (!entry.problem.empty()) return refuse(entry.problem);
    if (entry.layout != "lsb0")
        return refuse("unknown layout '" + entry.layout + "' (expected lsb0)");
    if (entry.bits < 1 || entry.bits > 8)
        return refuse("bits " + std::to_string(entry.bits) + " is outside 1..8");
    if (entry.group < 1) return refuse("group " + std::to_string(entry.group) + " is < 1");
    if (entry.shape.size() != 2)
        return refuse("shape " + shape_text(entry.shape) + " is not 2-D (expected [rows, cols])");
    const int64_t rows = entry.shape[0], cols = entry.shape[1];
    if (rows < 1 || cols < 1)
        return refuse("shape " + shape_text(entry.shape) + " has a dimension < 1");
    if (rows > kMaxCodes / cols)
        return refuse("shape " + shape_text(entry.shape) + " holds more than 2^56 codes");
    const int64_t n = rows * cols;
    if (n % entry.group != 0)
        return refuse("N = " + std::to_string(n) + " codes is not a multiple of group " +
                      std::to_string(entry.group));
    const uint64_t n_groups = static_cast<uint64_t>(n / entry.group);

    if (file.find(name))
        return refuse(
            "a tensor named '" + name +
            "' exists beside its quantized parts (there must be no tensor <name> itself)");
    const StTensorInfo* parts[3];
    for (int i = 0; i < 3; ++i) {
        parts[i] = file.find(name + std::string(kPartSuffixes[i]));
        if (!parts[i])
            return refuse("the entry has no '" + name + std::string(kPartSuffixes[i]) +
                          "' tensor in this file (all three parts must be in the same file)");
    }
    const StTensorInfo& qcodes = *parts[0];
    const uint64_t expected_bytes = (static_cast<uint64_t>(n) * entry.bits + 7) / 8;
    if (qcodes.dtype != StDtype::U8)
        return refuse(".qcodes dtype is " + std::string(st_dtype_name(qcodes.dtype)) +
                      " (expected U8)");
    if (qcodes.element_count() != expected_bytes)
        return refuse(".qcodes has " + std::to_string(qcodes.element_count()) +
                          " bytes (expected ceil(N*bits/8) = " + std::to_string(expected_bytes) +
                          " for N = " + std::to_string(n) +
                          ", bits = " + std::to_string(entry.bits) + ")",
                      "fix the metadata or the packed codes: bits and group are never inferred");
    for (int i = 1; i < 3; ++i) {
        const StTensorInfo& values = *parts[i];
        const std::string part(kPartSuffixes[i]);
        if (values.dtype != StDtype::F16)
            return refuse(part + " dtype is " + std::string(st_dtype_name(values.dtype)) +
                          " (expected F16)");
        if (values.shape.size() != 1 || static_cast<uint64_t>(values.shape[0]) != n_groups)
            return refuse(part + " shape is " + shape_text(values.shape) + " (expected " +
                              shape_text({static_cast<int64_t>(n_groups)}) + " = N/group)",
                          "fix the metadata or the scales/mins: bits and group are never inferred");
    }
    const std::span<const uint8_t> codes = file.data(qcodes);
    if (!mcq_padding_is_zero(codes, static_cast<uint64_t>(n), entry.bits))
        return refuse(".qcodes has non-zero padding bits after the last code",
                      "re-pack the codes with zero padding (the stream may be corrupt)");

    SourceTensor tensor;
    tensor.name = name;
    tensor.shape = entry.shape;
    tensor.file = file_name;
    QuantView view;
    view.bits = entry.bits;
    view.group = entry.group;
    view.codes = codes;
    view.scale_dtype = FloatDtype::F16;
    view.scales = file.data(*parts[1]);
    view.mins = file.data(*parts[2]);
    tensor.quant = view;
    return tensor;
}

void read_file(const std::shared_ptr<SafetensorsFile>& file, SourceModel& model) {
    const std::string& file_name = file->display_name();
    const mcq::FileMetadata metadata = mcq::parse_file_metadata(file_name, file->metadata());
    if (metadata.file_blocker) model.blockers.push_back(*metadata.file_blocker);
    const bool entries_usable = !metadata.file_blocker;

    std::set<std::string> handled;  // entries already turned into a tensor or a blocker
    for (const StTensorInfo& info : file->tensors()) {
        const std::optional<std::string> base = part_base(info.name);
        const std::string& key = base ? *base : info.name;
        const auto entry = metadata.entries.find(key);
        if (entry != metadata.entries.end() && entries_usable) {
            if (!handled.insert(key).second) continue;
            Blocker blocker;
            if (auto tensor = read_entry(*file, key, entry->second, &blocker))
                model.tensors.push_back(std::move(*tensor));
            else
                model.blockers.push_back(std::move(blocker));
            continue;
        }
        if (base) {
            // With an unusable metadata block the file-level blocker already covers every part.
            if (!entries_usable) continue;
            model.blockers.push_back(Blocker{
                info.name,
                file_name + ": no entry for '" + *base + "' in __metadata__.mcq" +
                    (metadata.present ? "" : " (the file has no mcq metadata)"),
                "add {bits, group, layout, shape} for '" + *base + "' or remove the tensor"});
            continue;
        }
        const std::optional<FloatDtype> dtype = float_dtype(info.dtype);
        if (!dtype) {
            model.blockers.push_back(
                Blocker{info.name,
                        file_name + ": dtype " + std::string(st_dtype_name(info.dtype)) +
                            " is not F32, F16 or BF16 and the tensor has no mcq entry",
                        "store it as F32/F16/BF16, or quantize it with an mcq entry"});
            continue;
        }
        model.tensors.push_back(source_detail::float_tensor(*file, info, *dtype));
    }
    if (!entries_usable) return;
    for (const auto& [name, entry] : metadata.entries) {
        if (handled.count(name)) continue;
        model.blockers.push_back(Blocker{
            name, file_name + ": the mcq entry has no .qcodes/.scales/.mins tensors in this file",
            "store the three parts in the file whose metadata lists the tensor"});
    }
}

}  // namespace

SourceModel read_mcq_model(const ModelDir& model_dir) {
    return read_mcq_files(model_dir.path(), model_dir.safetensors().files());
}

SourceModel read_mcq_files(const std::filesystem::path& model_dir,
                           const std::vector<std::shared_ptr<SafetensorsFile>>& files) {
    SourceModel model;
    model.dir = model_dir;
    model.format = "mcq-v1";
    for (const auto& file : files) {
        read_file(file, model);
        model.files.push_back(file);
    }
    return model;
}

}  // namespace rebox
