// verify's own shape table for the encoder families whose names the decoder table
// (expected_shapes.cpp) does not know: nomic_bert (HF order, nn.Linear [out, in]).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "verify/sources/ref_config.hpp"

namespace rebox::verify_ref {

// The shape of an unprefixed HF name of config.model_type's family; nullopt for a name it does not
// know or another model type.
std::optional<std::vector<int64_t>> expected_encoder_shape(const RefConfig& config,
                                                           std::string_view hf_name);

}  // namespace rebox::verify_ref
