// One value of a tensor as stored, for the mmproj tests' hand-worked expectations: a BF16
// safetensors value widened exactly, and a GGUF value of an F32 or BF16 tensor. A missing tensor,
// or a GGUF tensor of another type, is a test failure (and reads as 0).
#pragma once

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>

#include "format/gguf_file.hpp"
#include "format/safetensors.hpp"

namespace rebox::test {

inline float bf16_value(const uint8_t* data, size_t index) {
    return std::bit_cast<float>(static_cast<uint32_t>(data[2 * index] | data[2 * index + 1] << 8)
                                << 16);
}

inline float safetensors_bf16(const SafetensorsFile& st, const std::string& name, size_t index) {
    const StTensorInfo* info = st.find(name);
    EXPECT_NE(info, nullptr) << name;
    if (info == nullptr) return 0;
    return bf16_value(st.data(*info).data(), index);
}

inline float gguf_value(const GgufFile& file, const std::string& name, size_t index) {
    const GgufTensorInfo* t = file.find_tensor(name);
    EXPECT_NE(t, nullptr) << name;
    if (t == nullptr) return 0;
    const uint8_t* data = file.tensor_data(*t).data();
    if (t->type == GgmlType::F32) {
        float value = 0;
        std::memcpy(&value, data + 4 * index, 4);
        return value;
    }
    EXPECT_EQ(t->type, GgmlType::BF16) << name;
    return bf16_value(data, index);
}

}  // namespace rebox::test
