// llama_tensor_get_type and its helpers, rule for rule, the IQ1/IQ2/IQ3 mixtures included.
#include "recipe/type_choice.hpp"

#include <algorithm>
#include <cstdio>
#include <regex>

#include "rebox/error.hpp"

namespace rebox {
namespace {

using F = QuantFtype;
using T = GgmlType;

uint32_t block_of(GgmlType type) { return ggml_type_traits(type)->block_size; }

// The 1- and 2-bit i-quant file types, which share one branch of rules.
bool iq1_iq2_ftype(QuantFtype f) {
    return f == F::MOSTLY_IQ2_XXS || f == F::MOSTLY_IQ2_XS || f == F::MOSTLY_IQ1_S ||
           f == F::MOSTLY_IQ2_S || f == F::MOSTLY_IQ2_M || f == F::MOSTLY_IQ1_M;
}
bool iq2_s_or_m(QuantFtype f) { return f == F::MOSTLY_IQ2_S || f == F::MOSTLY_IQ2_M; }

bool use_more_bits(int i_layer, int n_layers) {
    return i_layer < n_layers / 8 || i_layer >= 7 * n_layers / 8 ||
           (i_layer - n_layers / 8) % 3 == 2;
}

struct Counters {
    int n_attention_wv = 0;
    int n_ffn = 0;  // n_ffn_down = n_ffn_gate = n_ffn_up = n_layer_all
    int i_attention_wv = 0;
    int i_ffn_down = 0;
    int i_ffn_gate = 0;
    int i_ffn_up = 0;
    bool has_tied_embeddings = true;
};

class Chooser {
  public:
    Chooser(const QuantModelShape& shape, const QuantRecipe& recipe,
            const std::vector<RecipeTensor>& tensors)
        : shape_(shape),
          recipe_(recipe),
          default_type_(quant_ftype_info(recipe.ftype).default_type) {
        for (const TensorTypeOverride& o : recipe.tensor_types) {
            try {
                patterns_.emplace_back(std::regex(o.pattern), o);
            } catch (const std::regex_error& e) {
                throw_input_error("--tensor-type", o.pattern,
                                  std::string("not a regular expression: ") + e.what(),
                                  "an ECMAScript pattern such as attn_v or blk\\.[0-3]\\.ffn_down");
            }
        }
        for (const RecipeTensor& t : tensors) {
            const TensorCategory category = tensor_category(t.name);
            if (category_is_attn_v(category)) ++counters_.n_attention_wv;
            if (category == TensorCategory::output) counters_.has_tied_embeddings = false;
        }
        counters_.n_ffn = shape.n_layer;
    }

    TensorTypeChoice choose(const RecipeTensor& t) {
        TensorTypeChoice choice;
        const int n_dims = static_cast<int>(std::max<size_t>(1, ggml_n_dims(t.ne)));
        choice.allows_quantization =
            tensor_allows_quantization(t.name, n_dims, recipe_.quantize_output);
        if (!choice.allows_quantization) {
            choice.type = t.type;
            choice.reason = "kept (llama-quantize never quantizes it)";
            return choice;
        }
        choice.type = get_type(t, choice);
        choice.requires_imatrix = requires_imatrix(t.name, choice.type);
        return choice;
    }

  private:
    GgmlType get_type(const RecipeTensor& t, TensorTypeChoice& choice) {
        const TensorCategory category = tensor_category(t.name);
        if (recipe_.token_embedding_type && category == TensorCategory::token_embd) {
            // per_layer_token_embd follows --token-embedding-type unless a --tensor-type names it.
            const bool named = t.name == "per_layer_token_embd.weight" && matching_override(t.name);
            if (!named) {
                choice.reason = "--token-embedding-type";
                return *recipe_.token_embedding_type;
            }
        }
        if (recipe_.output_tensor_type && category == TensorCategory::output) {
            choice.reason = "--output-tensor-type";
            return *recipe_.output_tensor_type;
        }
        GgmlType type = default_type_;
        if (!ggml_type_is_quantized(default_type_)) {
            choice.reason = "file type";
            return type;
        }
        bool manual = false;
        if (const TensorTypeOverride* o = matching_override(t.name)) {
            type = o->type;
            manual = true;
            choice.reason = "--tensor-type " + o->pattern + "=" + ggml_type_name(o->type);
        }
        if (!manual && !recipe_.pure) {
            type = impl(t, type, category);
            choice.reason = "recipe";
        } else if (!manual) {
            choice.reason = "--pure";
        }
        const GgmlType chosen = fallback(t, type);
        if (chosen != type || static_cast<uint64_t>(t.ne[0]) % block_of(type) != 0) {
            choice.fallback = true;
            choice.reason += ", fallback: row length " + std::to_string(t.ne[0]) +
                             " is not a multiple of " + std::to_string(block_of(type)) + " (" +
                             ggml_type_name(type) + ")";
        }
        return chosen;
    }

    const TensorTypeOverride* matching_override(const std::string& name) const {
        for (const auto& [regex, o] : patterns_)
            if (std::regex_search(name, regex)) return &o;
        return nullptr;
    }

    // tensor_type_fallback.
    GgmlType fallback(const RecipeTensor& t, GgmlType target) const {
        const int64_t ncols = t.ne[0];
        if (ncols % block_of(target) == 0) return target;
        GgmlType result = target;
        switch (target) {
            case T::IQ1_S:
            case T::IQ1_M:
            case T::IQ2_XXS:
            case T::IQ2_XS:
            case T::IQ2_S:
            case T::IQ3_XXS:
            case T::IQ3_S:
            case T::IQ4_XS:
                result = T::IQ4_NL;
                break;
            case T::Q2_0:
            case T::Q2_K:
            case T::Q3_K:
            case T::TQ1_0:
            case T::TQ2_0:
                result = T::Q4_0;
                break;
            case T::Q4_K:
                result = T::Q5_0;
                break;
            case T::Q5_K:
                result = T::Q5_1;
                break;
            case T::Q6_K:
                result = T::Q8_0;
                break;
            default:
                if (block_of(target) > 32)
                    throw_input_error(t.name, "type",
                                      "llama-quantize has no fallback for " +
                                          ggml_type_name(target) + " on rows of " +
                                          std::to_string(ncols),
                                      "another type for this tensor");
        }
        if (ncols % block_of(result) != 0) result = T::F16;
        return result;
    }

    // layer_info: for MoE models the layer comes from the name (experts are not consecutive).
    std::pair<int, int> layer_info(int i_layer, const std::string& name) const {
        const int n_layer = counters_.n_ffn;
        if (std::max<uint32_t>(1, shape_.n_expert) > 1) {
            if (std::sscanf(name.c_str(), "blk.%d.", &i_layer) != 1)
                throw_input_error(name, "layer", "no blk.N. prefix in an expert model's tensor",
                                  "llama-quantize stops here too (\"Failed to determine layer\")");
            if (i_layer < 0 || i_layer >= n_layer)
                throw_input_error(name, "layer",
                                  "layer " + std::to_string(i_layer) + " is outside [0, " +
                                      std::to_string(n_layer) + ")",
                                  "block_count covering every blk.N");
        }
        return {i_layer, n_layer};
    }

    GgmlType impl(const RecipeTensor& t, GgmlType new_type, TensorCategory category) {
        const F ftype = recipe_.ftype;
        const bool falcon = shape_.arch == "falcon";
        const uint32_t n_expert = shape_.n_expert;
        if (category == TensorCategory::output ||
            (counters_.has_tied_embeddings && category == TensorCategory::token_embd)) {
            if (recipe_.output_tensor_type) return *recipe_.output_tensor_type;
            if (ftype == F::MOSTLY_MXFP4_MOE || falcon || t.ne[0] % block_of(new_type) != 0)
                return T::Q8_0;
            if (iq1_iq2_ftype(ftype) || ftype == F::MOSTLY_IQ3_XXS) return T::Q5_K;
            return new_type != T::Q8_0 ? T::Q6_K : new_type;
        }
        if (ftype == F::MOSTLY_MXFP4_MOE) {
            // Tensors with experts (ne[2] > 1) in MXFP4, everything else in Q8_0. bailingmoe3's
            // 3-D MLA projections are not experts: only its ffn_up/gate/down roles count.
            const bool bailing = shape_.arch == "bailingmoe3";
            const bool bailing_expert = category == TensorCategory::ffn_up ||
                                        category == TensorCategory::ffn_gate ||
                                        category == TensorCategory::ffn_down;
            const bool experts = t.ne.size() > 2 && t.ne[2] > 1;
            return experts && (!bailing || bailing_expert) ? T::MXFP4 : T::Q8_0;
        }
        if (category == TensorCategory::token_embd) {
            if (recipe_.token_embedding_type) return *recipe_.token_embedding_type;
            if (ftype == F::MOSTLY_IQ2_XXS || ftype == F::MOSTLY_IQ2_XS ||
                ftype == F::MOSTLY_IQ1_S || ftype == F::MOSTLY_IQ1_M)
                return T::Q2_K;
            if (iq2_s_or_m(ftype) || ftype == F::MOSTLY_IQ3_XXS) return T::IQ3_S;
            if (ftype == F::MOSTLY_TQ1_0 || ftype == F::MOSTLY_TQ2_0 || ftype == F::MOSTLY_Q2_0)
                return T::Q4_K;
            return new_type;
        }
        if (iq1_iq2_ftype(ftype)) {
            // One branch for every tensor of these files: attn_v, attn_k of 8 experts, the
            // first eighth of ffn_down (counted, no layer parsed) and attn_output change.
            if (category_is_attn_v(category)) {
                if (shape_.n_gqa() >= 4 || n_expert >= 4)
                    new_type = T::Q4_K;
                else
                    new_type = iq2_s_or_m(ftype) ? T::IQ3_S : T::Q2_K;
                ++counters_.i_attention_wv;
            } else if (n_expert == 8 && category == TensorCategory::attn_k) {
                new_type = T::Q4_K;
            } else if (category == TensorCategory::ffn_down) {
                if (counters_.i_ffn_down < counters_.n_ffn / 8)
                    new_type = iq2_s_or_m(ftype) ? T::IQ3_S : T::Q2_K;
                ++counters_.i_ffn_down;
            } else if (category == TensorCategory::attn_output) {
                if (n_expert == 8)
                    new_type = T::Q5_K;
                else if (ftype == F::MOSTLY_IQ1_S || ftype == F::MOSTLY_IQ1_M)
                    new_type = T::IQ2_XXS;
                else if (iq2_s_or_m(ftype))
                    new_type = T::IQ3_S;
            }
            return new_type;
        }
        if (category_is_attn_v(category)) {
            const int i = counters_.i_attention_wv;
            if (ftype == F::MOSTLY_Q2_K) {
                new_type = shape_.n_gqa() >= 4 ? T::Q4_K : T::Q3_K;
            } else if (ftype == F::MOSTLY_Q2_K_S && shape_.n_gqa() >= 4) {
                new_type = T::Q4_K;
            } else if (ftype == F::MOSTLY_IQ3_XXS) {
                new_type = shape_.n_gqa() >= 4    ? T::Q4_K
                           : !recipe_.has_imatrix ? T::IQ3_S
                                                  : T::IQ3_XXS;
            } else if ((ftype == F::MOSTLY_IQ3_XS || ftype == F::MOSTLY_IQ3_S) &&
                       shape_.n_gqa() >= 4) {
                new_type = T::Q4_K;
            } else if (ftype == F::MOSTLY_IQ3_M) {
                new_type = T::Q4_K;
            } else if (ftype == F::MOSTLY_Q3_K_M) {
                new_type = i < 2 ? T::Q5_K : T::Q4_K;
            } else if (ftype == F::MOSTLY_Q3_K_L) {
                new_type = T::Q5_K;
            } else if ((ftype == F::MOSTLY_IQ4_NL || ftype == F::MOSTLY_IQ4_XS) &&
                       shape_.n_gqa() >= 4) {
                new_type = T::Q5_K;
            } else if ((ftype == F::MOSTLY_Q4_K_M || ftype == F::MOSTLY_Q5_K_M) &&
                       use_more_bits(i, counters_.n_attention_wv)) {
                new_type = T::Q6_K;
            } else if (ftype == F::MOSTLY_Q4_K_S && i < 4) {
                new_type = T::Q5_K;
            }
            if (shape_.type_70b && (new_type == T::Q3_K || new_type == T::Q4_K)) new_type = T::Q5_K;
            if (n_expert == 8) new_type = T::Q8_0;
            ++counters_.i_attention_wv;
            return new_type;
        }
        if (category == TensorCategory::attn_k) {
            if (n_expert == 8) return T::Q8_0;
            if (ftype == F::MOSTLY_IQ3_XS) return T::IQ3_XXS;
            if (ftype == F::MOSTLY_IQ3_XXS) return T::IQ2_S;
            return new_type;
        }
        if (category == TensorCategory::attn_q) {
            if (ftype == F::MOSTLY_IQ3_XS) return T::IQ3_XXS;
            if (ftype == F::MOSTLY_IQ3_XXS) return T::IQ2_S;
            return new_type;
        }
        if (category == TensorCategory::ffn_down) {
            const auto [i_layer, n_layer] = layer_info(counters_.i_ffn_down, t.name);
            if (ftype == F::MOSTLY_Q2_K) {
                new_type = T::Q3_K;
            } else if (ftype == F::MOSTLY_Q2_K_S) {
                if (i_layer < n_layer / 8) new_type = T::Q4_K;
            } else if (ftype == F::MOSTLY_IQ3_XXS && !recipe_.has_imatrix) {
                new_type = i_layer < n_layer / 8 ? T::Q4_K : T::Q3_K;
            } else if (ftype == F::MOSTLY_Q3_K_M) {
                new_type = i_layer < n_layer / 16                       ? T::Q5_K
                           : !falcon || use_more_bits(i_layer, n_layer) ? T::Q4_K
                                                                        : T::Q3_K;
            } else if (ftype == F::MOSTLY_IQ3_M &&
                       (i_layer < n_layer / 8 ||
                        (n_expert == 8 && use_more_bits(i_layer, n_layer)))) {
                new_type = T::Q4_K;
            } else if (ftype == F::MOSTLY_Q3_K_L) {
                new_type = falcon ? T::Q4_K : T::Q5_K;
            } else if (ftype == F::MOSTLY_Q4_K_M) {
                if (falcon)
                    new_type = i_layer < n_layer / 16            ? T::Q6_K
                               : use_more_bits(i_layer, n_layer) ? T::Q5_K
                                                                 : T::Q4_K;
                else if (use_more_bits(i_layer, n_layer))
                    new_type = T::Q6_K;
            } else if (i_layer < n_layer / 8 &&
                       (ftype == F::MOSTLY_IQ4_NL || ftype == F::MOSTLY_IQ4_XS) &&
                       !recipe_.has_imatrix) {
                new_type = T::Q5_K;
            } else if (ftype == F::MOSTLY_Q5_K_M && use_more_bits(i_layer, n_layer)) {
                new_type = T::Q6_K;
            } else if (ftype == F::MOSTLY_Q4_K_S && !falcon && i_layer < n_layer / 8) {
                new_type = T::Q5_K;
            } else if ((ftype == F::MOSTLY_Q4_0 || ftype == F::MOSTLY_Q5_0) &&
                       recipe_.has_imatrix && i_layer < n_layer / 8) {
                new_type = ftype == F::MOSTLY_Q4_0 ? T::Q4_1 : T::Q5_1;
            }
            ++counters_.i_ffn_down;
            return new_type;
        }
        if (category == TensorCategory::attn_output) {
            if (!falcon) {
                if (n_expert == 8) {
                    if (ftype == F::MOSTLY_Q2_K || ftype == F::MOSTLY_IQ3_XS ||
                        ftype == F::MOSTLY_IQ3_XXS || ftype == F::MOSTLY_Q3_K_S ||
                        ftype == F::MOSTLY_Q3_K_M || ftype == F::MOSTLY_IQ4_NL ||
                        ftype == F::MOSTLY_Q4_K_S || ftype == F::MOSTLY_Q4_K_M ||
                        ftype == F::MOSTLY_IQ3_S || ftype == F::MOSTLY_IQ3_M ||
                        ftype == F::MOSTLY_IQ4_XS)
                        new_type = T::Q5_K;
                } else if (ftype == F::MOSTLY_Q2_K) {
                    new_type = T::Q3_K;
                } else if (ftype == F::MOSTLY_IQ3_XXS) {
                    new_type = T::IQ3_S;
                } else if (ftype == F::MOSTLY_Q3_K_M) {
                    new_type = T::Q4_K;
                } else if (ftype == F::MOSTLY_Q3_K_L) {
                    new_type = T::Q5_K;
                } else if (ftype == F::MOSTLY_IQ3_M) {
                    new_type = T::Q4_K;
                }
            } else if (ftype == F::MOSTLY_Q3_K_L) {
                new_type = T::Q4_K;
            }
            return new_type;
        }
        // attn_qkv never gets here (it is attn_v-like, above). ffn_gate / ffn_up: the layer is
        // still parsed (and checked) for expert models; only IQ3_XS changes their type.
        if (category == TensorCategory::ffn_gate || category == TensorCategory::ffn_up) {
            int& counter =
                category == TensorCategory::ffn_gate ? counters_.i_ffn_gate : counters_.i_ffn_up;
            const std::pair<int, int> info = layer_info(counter, t.name);
            if (ftype == F::MOSTLY_IQ3_XS && info.first >= info.second / 8 &&
                info.first < 7 * info.second / 8)
                new_type = T::IQ3_XXS;
            ++counter;
        }
        return new_type;
    }

    bool requires_imatrix(const std::string& name, GgmlType type) const {
        if (name == "token_embd.weight" || name == "per_layer_token_embd.weight" ||
            name == "output.weight")
            return false;
        // tensor_requires_imatrix: the IQ1/IQ2/IQ3_XXS targets always; Q2_K only in a Q2_K_S file.
        switch (type) {
            case T::IQ3_XXS:
            case T::IQ2_XXS:
            case T::IQ2_XS:
            case T::IQ2_S:
            case T::IQ1_M:
            case T::IQ1_S:
                return true;
            default:
                return type == T::Q2_K && recipe_.ftype == F::MOSTLY_Q2_K_S;
        }
    }

    const QuantModelShape& shape_;
    const QuantRecipe& recipe_;
    const GgmlType default_type_;
    std::vector<std::pair<std::regex, TensorTypeOverride>> patterns_;
    Counters counters_;
};

}  // namespace

std::vector<TensorTypeChoice> choose_tensor_types(const std::vector<RecipeTensor>& tensors,
                                                  const QuantModelShape& shape,
                                                  const QuantRecipe& recipe) {
    Chooser chooser(shape, recipe, tensors);
    std::vector<TensorTypeChoice> choices;
    choices.reserve(tensors.size());
    for (const RecipeTensor& t : tensors) choices.push_back(chooser.choose(t));
    return choices;
}

}  // namespace rebox
