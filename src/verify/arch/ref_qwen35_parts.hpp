// The parts of verify's qwen35 record (qwen35.cpp) that verify's qwen3next (qwen3next.cpp) shares:
// both are Qwen3NextModel's layers, read from the same config.json fields with transformers'
// defaults, with the same MoE and MTP source names.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "verify/sources/ref_config.hpp"

namespace rebox::verify_ref {
class KvChecker;
}

namespace rebox::verify_ref::detail::qwen35_ref {

// head_dim 256 when config.json has none.
void qwen35_defaults(nlohmann::json& root);
// The linear-attention numbers, full_attention_interval, mtp_num_hidden_layers, the partial rotary
// factor and the M-RoPE sections.
void qwen35_config(const nlohmann::json& root, RefConfig& c);
// HF shapes of the MoE model's names (layers, MTP layers, MTP head); the split in_proj_qkvz parts
// are known by their part names (in_proj_qkv, in_proj_z).
std::optional<std::vector<int64_t>> qwen35moe_shape(const RefConfig& c, std::string_view name);
// _QwenMtpMixin's nextn_predict_layers and Qwen3NextModel's ssm.* / full_attention_interval /
// rope.dimension_count.
void check_qwen3next_kvs(KvChecker& kv, const std::string& arch, const RefConfig& config);

}  // namespace rebox::verify_ref::detail::qwen35_ref
