// Shared by the GPTQ, AWQ and compressed-tensors adapters: config.json's quantization_config,
// the tensor index of a (sharded) safetensors checkpoint, the walk over every tensor in file
// order in which a format claims the parts of its quantized modules and everything else becomes
// an ordinary float SourceTensor, and the steps every format's module takes (scales, g_idx, the
// IntQuantView as a SourceTensor). Every refusal is a Blocker naming the tensor (or config field).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "format/safetensors.hpp"
#include "source/model_dir.hpp"
#include "source/source_model.hpp"

namespace rebox::prequant {

using Located = StLocated;

// config.json's "quantization_config" object (top level, else under "text_config"), or nullptr.
const nlohmann::json* quantization_config(const nlohmann::json& config);
// Its "quant_method" string, or "" when there is none.
std::string quant_method(const nlohmann::json& config);

// An int from a JSON value (integer, or a whole-number float/string); nullopt otherwise.
std::optional<int64_t> json_int(const nlohmann::json& object, const char* key);

class PackedReader {
  public:
    PackedReader(const ModelDir& dir, SourceModel& model);

    const Located* find(const std::string& name) const;
    // "FILE: reason" blocker naming the tensor.
    void block(const std::string& tensor, const Located& where, const std::string& reason,
               const std::string& fix);
    // A config.json problem stops the run: rebox::Error (input class) "config.json: FIELD: reason;
    // fix" (one line, exit 1).
    [[noreturn]] void block_config(const std::string& field, const std::string& reason,
                                   const std::string& fix);
    // The tensor's dtype is one of `dtypes` and its shape is `shape`; else a blocker saying what
    // was expected (with `why`, e.g. "for qweight [128, 64] at bits 4").
    bool expect(const std::string& name, const Located& part, std::initializer_list<StDtype> dtypes,
                const std::vector<int64_t>& shape, const std::string& why);
    // The module's part `suffix` (e.g. ".scales"), or a blocker on MODULE.weight saying it is
    // missing.
    const Located* require(const std::string& module, const std::string& suffix,
                           const std::string& what);

    // Walks every tensor in file order. anchor(name) returns the module name when `name` is the
    // tensor that defines a quantized module (e.g. P.qweight -> P); then read_module(P, where)
    // runs. part_suffixes are the other parts of a module: skipped when their module's anchor
    // exists, a blocker otherwise. Every other tensor becomes a float SourceTensor (F32/F16/BF16)
    // or a blocker.
    void walk(const std::vector<std::string>& anchor_suffixes,
              const std::vector<std::string>& part_suffixes,
              const std::function<void(const std::string& module, const Located& anchor)>& read);

    // The scales tensor of a module: F16/BF16/F32 of `shape` (else a blocker with `why`), into v
    // (group-major: [n_groups, rows], else [rows, n_groups]).
    bool read_scales(const std::string& name, const Located& scales,
                     const std::vector<int64_t>& shape, const std::string& why, bool group_major,
                     IntQuantView* v);
    // The optional g_idx tensor `g_idx_name`: absent is fine; else it must be int32 [v->cols]
    // (blocker with `why`) and every value in [0, n_groups) (else a blocker naming the first); one
    // equal to k / group is dropped (plain groups), any other is kept in v->g_idx. Its bytes count
    // into v->packed_bytes.
    bool read_g_idx(const std::string& name, const std::string& g_idx_name, const std::string& why,
                    IntQuantView* v);
    // The quantized weight `name` ([v.rows, v.cols], stored in `anchor`'s file) as a SourceTensor.
    void add_int_quant(const std::string& name, const Located& anchor, const IntQuantView& v);

    // A part of a quantized module stored without the module's weight (`expected`, e.g.
    // P.weight_packed): one blocker on the part.
    void block_stray_part(const Located& part, const std::string& expected);

    SourceModel& model() { return model_; }
    // The tensor as an ordinary float SourceTensor, or a blocker when its dtype is not a float.
    void add_float(const Located& where);

  private:
    SourceModel& model_;
    std::filesystem::path config_path_;
    const SafetensorsModel& safetensors_;  // its find() is the by-name index
    std::vector<std::shared_ptr<SafetensorsFile>> files_;
};

// Little-endian int32 element i of a tensor's bytes.
int32_t load_i32(std::span<const uint8_t> bytes, uint64_t i);

}  // namespace rebox::prequant
