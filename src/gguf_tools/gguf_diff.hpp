// `rebox diff`: compares two GGUF models (plain files or split sets) KV by KV and tensor by tensor.
// Tensors are compared as bytes first, then, when a type can be dequantized, as fp32 bit patterns,
// so a Q4_1 tensor and its exact F32 twin compare as "same values in another type".
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace rebox {

struct KvDifference {
    enum class Kind { added, removed, changed };
    std::string key;
    Kind kind = Kind::changed;
    std::string before;  // rendering in A ("" when added)
    std::string after;   // rendering in B ("" when removed)
    std::string detail;  // arrays: "length 459 vs 460, first difference at index 12"
};

struct TensorComparison {
    enum class Verdict {
        identical_bytes,  // same type, shape and bytes
        same_values,      // dequantized fp32 values bit-equal (another type, or other bytes)
        different,        // values differ: max_abs_error, differing_values
        shape_differs,    // ne differ
        not_compared,     // bytes differ and a type has no dequantizer (NVFP4, IQ1..IQ3, TQ)
        only_in_a,
        only_in_b,
    };
    std::string name;
    Verdict verdict = Verdict::identical_bytes;
    std::string type_a, type_b;  // ggml type names ("" when absent)
    std::string shape_a, shape_b;
    uint64_t elements = 0;
    uint64_t differing_values = 0;  // fp32 bit patterns that differ
    double max_abs_error = 0.0;     // over differing values (inf when a NaN/inf is involved)
};

struct GgufDiff {
    std::vector<KvDifference> kvs;
    std::vector<TensorComparison> tensors;  // A's order, then tensors only in B
    // No KV difference, and every tensor identical bytes or same values.
    bool same() const;
};

const char* verdict_name(TensorComparison::Verdict verdict);  // "identical bytes", ...

// Opens both (first shards of split sets are followed); throws rebox::Error for unreadable input.
// split.* keys are not compared (a split set and its merged file have the same KVs).
GgufDiff diff_gguf(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace rebox
