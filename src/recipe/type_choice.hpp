// llama-quantize's per-tensor type choice (src/llama-quant.cpp v0.4.0: llama_tensor_get_type,
// llama_tensor_get_type_impl, tensor_type_fallback, tensor_requires_imatrix), for the file types
// of quant_ftype.hpp. Tensors must come in llama's order (llama_tensor_order.hpp): the attn_v and
// ffn_down counters advance in that order and decide which layers get more bits.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rebox/ggml_type.hpp"
#include "recipe/model_shape.hpp"
#include "recipe/quant_ftype.hpp"
#include "recipe/tensor_category.hpp"

namespace rebox {

// --tensor-type PATTERN=TYPE: the pattern as llama-quantize passes it on (lower-cased), an
// ECMAScript regular expression searched anywhere in the tensor name; the first that matches wins.
struct TensorTypeOverride {
    std::string pattern;
    GgmlType type = GgmlType::F32;
};

struct QuantRecipe {
    QuantFtype ftype = QuantFtype::MOSTLY_Q4_K_M;
    std::optional<GgmlType> output_tensor_type;    // --output-tensor-type
    std::optional<GgmlType> token_embedding_type;  // --token-embedding-type
    std::vector<TensorTypeOverride> tensor_types;  // --tensor-type, in command-line order
    bool pure = false;                             // --pure
    bool quantize_output = true;                   // false: --leave-output-tensor
    bool has_imatrix = false;                      // --imatrix given
};

struct RecipeTensor {
    std::string name;
    std::vector<int64_t> ne;  // ggml order
    GgmlType type = GgmlType::F32;
};

struct TensorTypeChoice {
    GgmlType type = GgmlType::F32;
    bool allows_quantization = false;  // false: kept as it is, whatever the file type
    bool requires_imatrix = false;     // tensor_requires_imatrix
    bool fallback = false;             // tensor_type_fallback replaced the recipe's type
    std::string reason;                // why: "recipe", "--pure", "--tensor-type attn_v=q8_0", ...
};

// One choice per tensor, in the given (llama) order. Throws Error (input class) for a
// --tensor-type pattern that is not a regular expression, an expert FFN tensor without a valid
// "blk.N." layer, and a recipe type with no fallback for the tensor's row length.
std::vector<TensorTypeChoice> choose_tensor_types(const std::vector<RecipeTensor>& tensors,
                                                  const QuantModelShape& shape,
                                                  const QuantRecipe& recipe);

}  // namespace rebox
