// llama-quantize's decisions for any set of input tensors, wherever they are held (a GGUF file for
// `rebox quantize`, a planned conversion for `rebox convert --quantize`): options parsed as
// llama-quantize parses them, each tensor's type in llama's order (recipe/), the output KVs in
// llama-quantize's order and the output layouts. Every refusal that does not need the tensor
// values happens here, so nothing is created for them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "format/gguf_shards.hpp"
#include "quantize_file/imatrix_file.hpp"
#include "rebox/rebox.hpp"
#include "recipe/type_choice.hpp"

namespace rebox {

// One input tensor as the recipe sees it: its GGUF name, shape and type; for --keep-split, its
// input shard and data offset there.
struct QuantizeInputTensor {
    std::string name;
    std::vector<int64_t> ne;
    GgmlType type = GgmlType::F32;
    size_t shard = 0;
    uint64_t offset = 0;
    // convert --fp8-as-q8 (the converter's tensor_force_quant): this type whatever the recipe
    // says, as the converter forces it before llama-quantize's rules would apply.
    std::optional<GgmlType> forced;
};

struct QuantizeTensorChoice {
    size_t input_index = 0;  // into the input tensors
    std::string name;        // in the output (blk.N renumbered by --prune-layers)
    GgmlType target = GgmlType::F32;
    TensorTypeChoice choice;
    bool requantize = false;      // source quantized, target differs, --allow-requantize
    bool kept_quantized = false;  // source quantized, target differs, kept as it is
    const std::vector<float>* imatrix = nullptr;  // its entry (ne[0] * ne[2] weights), if used
};

struct QuantizeChoices {
    QuantFtypeInfo ftype;
    Imatrix imatrix;                            // empty without --imatrix
    std::vector<QuantizeTensorChoice> tensors;  // llama's order (--keep-split: the input's)
    ShardedLayout layout;                       // one shard unless split limits are set
    std::vector<std::string> notes;
    bool needs_imatrix = false;  // dry_run without an imatrix: a real run would refuse
};

// input_kvs: the input's KVs in order, without split.*. alignment: the input's (kept; a note says
// so when it is not 32). file: the input as the error lines name it. Throws Error (input class)
// for bad options, an unreadable imatrix and a type that cannot hold a tensor's rows. Tensors of
// layers --prune-layers drops are not in `tensors`.
QuantizeChoices choose_quantized_output(const std::vector<GgufKV>& input_kvs,
                                        const std::vector<QuantizeInputTensor>& tensors,
                                        uint32_t alignment, const QuantizeOptions& options,
                                        const std::string& file);

}  // namespace rebox
