// Source-side expected values (mcq-v1 / MLX affine formula, float widening); plain loops on spans.
// Per group the scale and min are widened once and the group's codes go through verify's
// scale_codes kernel (scalar, SSE2 or AVX2: the same multiply, then add); on the AVX2 path codes of
// 1..4 bits are read from the stream and scaled in one step (scale_lsb0_groups), and whole groups
// carried as Q4_1 are compared with their blocks in registers (quantized_equals_q4_1): codes only
// where each block's d and m widen to its group's own scale and min, codes and value tables
// otherwise.
#include "verify/values/ref_expected.hpp"

#include <algorithm>

#include "verify/values/ref_kernels.hpp"
#include "verify/values/ref_lsb0.hpp"

namespace rebox::verify_ref {
namespace {

// Value `index` of a little-endian parameter array, widened exactly to binary32.
template <SourceFloat Dtype>
inline float param_at(std::span<const uint8_t> values, uint64_t index) {
    if constexpr (Dtype == SourceFloat::F32)
        return float_from_bits(load_u32le(&values[4 * index]));
    else if constexpr (Dtype == SourceFloat::BF16)
        return bf16_bits_to_float(load_u16le(&values[2 * index]));
    else
        return half_bits_to_float(load_u16le(&values[2 * index]));
}

// Values [index, index + run) of one group straight from the lsb0 stream: whole aligned 8-code
// groups through the fused kernel (which reads 4 bytes at group * bits: used only while those lie
// inside the stream), the codes before and after them extracted first and then scaled.
void packed_run(const QuantView& source, uint64_t index, size_t run, float scale, float min,
                uint8_t* codes, float* out, const VerifyKernels& kernel) {
    const auto extracted = [&](uint64_t at, size_t n, float* values) {
        extract_lsb0_codes(source.qcodes, source.bits, at, std::span<uint8_t>(codes, n));
        kernel.scale_codes(codes, n, scale, min, values);
    };
    const uint64_t bits = source.bits, size = source.qcodes.size();
    const size_t head = static_cast<size_t>(std::min<uint64_t>(run, (8 - index % 8) % 8));
    if (head > 0) extracted(index, head, out);
    const uint64_t group = (index + head) / 8;
    const uint64_t readable_groups = size >= 4 ? (size - 4) / bits + 1 : 0;
    const uint64_t groups =
        readable_groups > group ? std::min<uint64_t>((run - head) / 8, readable_groups - group) : 0;
    if (groups > 0)
        kernel.scale_lsb0_groups(source.qcodes.data() + group * bits, static_cast<unsigned>(bits),
                                 static_cast<size_t>(groups), scale, min, out + head);
    const size_t done = head + static_cast<size_t>(groups) * 8;
    if (done < run) extracted(index + done, run - done, out + done);
}

// Whole groups [first, first + count) (first and count multiples of the group, the group a multiple
// of 8 and of `block`) whose fused kernel's 4-byte reads stay inside the stream, with their scales
// and mins widened; `count` is 0 (nothing to run) otherwise.
struct WholeGroups {
    static constexpr size_t kMaxGroups = 1024;
    size_t count = 0;
    const uint8_t* words = nullptr;  // the first group's first 8-code group
    float scales[kMaxGroups], mins[kMaxGroups];
};

template <SourceFloat Dtype>
void widen_whole_groups(const QuantView& source, uint64_t first, uint64_t count, uint64_t block,
                        WholeGroups& runs) {
    runs.count = 0;
    const uint64_t group = source.group, bits = source.bits;
    if (group == 0 || group % 8 != 0 || group % block != 0 || first % group != 0 ||
        count % group != 0 || count == 0 || count / group > WholeGroups::kMaxGroups)
        return;
    const uint64_t last_word_end = ((first + count) / 8 - 1) * bits + 4;
    if (last_word_end > source.qcodes.size()) return;
    const uint64_t first_group = first / group;
    for (uint64_t r = 0; r < count / group; ++r) {
        runs.scales[r] = param_at<Dtype>(source.scales, first_group + r);
        runs.mins[r] = param_at<Dtype>(source.mins, first_group + r);
    }
    runs.words = source.qcodes.data() + first / 8 * bits;
    runs.count = static_cast<size_t>(count / group);
}

// Whole groups [first, first + out.size()) in one kernel call (see WholeGroups); false (nothing
// written) where that does not apply.
template <SourceFloat Dtype>
bool whole_groups(const QuantView& source, uint64_t first, std::span<float> out,
                  const VerifyKernels& kernel) {
    if (kernel.scale_lsb0_runs == nullptr) return false;
    WholeGroups runs;
    widen_whole_groups<Dtype>(source, first, out.size(), 1, runs);
    if (runs.count == 0) return false;
    kernel.scale_lsb0_runs(runs.words, source.bits, static_cast<size_t>(source.group), runs.count,
                           runs.scales, runs.mins, out.data());
    return true;
}

// Does every block's d and m, widened from fp16 by verify's table, have the bits of its group's own
// scale and min widened from their stored type (fp16: the same two bytes, compared as they are)?
// Then a code takes the same value on both sides (the same two binary32 operands, the same
// multiply and add), so equal codes settle every value and no value table is needed.
template <SourceFloat Dtype>
bool headers_hold_group_params(const QuantView& source, uint64_t first, uint64_t count,
                               std::span<const uint8_t> blocks) {
    const uint64_t group = source.group, first_group = first / group;
    const uint64_t groups = count / group, blocks_per_group = group / 32;
    const uint64_t width = Dtype == SourceFloat::F32 ? 4 : 2;
    if ((first_group + groups) * width > source.scales.size() ||
        (first_group + groups) * width > source.mins.size())
        return false;
    const uint8_t* block = blocks.data();
    uint32_t differ = 0;
    for (uint64_t g = first_group; g < first_group + groups; ++g) {
        if constexpr (Dtype == SourceFloat::F16) {
            const uint32_t header = load_u16le(&source.scales[2 * g]) |
                                    (static_cast<uint32_t>(load_u16le(&source.mins[2 * g])) << 16);
            for (uint64_t k = 0; k < blocks_per_group; ++k, block += 20)
                differ |= load_u32le(block) ^ header;
        } else {
            const uint32_t scale = float_bits(param_at<Dtype>(source.scales, g));
            const uint32_t min = float_bits(param_at<Dtype>(source.mins, g));
            for (uint64_t k = 0; k < blocks_per_group; ++k, block += 20)
                differ |= (float_bits(half_bits_to_float(load_u16le(block))) ^ scale) |
                          (float_bits(half_bits_to_float(load_u16le(block + 2))) ^ min);
        }
    }
    return differ == 0;
}

template <SourceFloat Dtype>
bool whole_groups_equal_q4_1(const QuantView& source, uint64_t first, uint64_t count,
                             std::span<const uint8_t> blocks, const VerifyKernels& kernel) {
    {
        // Bytes the code compare reads: exactly the blocks' own for 3 and 4 bits; 1 and 2 bits
        // read a 32-bit word at each 8-code group.
        const uint64_t group = source.group, bits = source.bits, end = (first + count) / 8;
        const uint64_t reads_to = bits >= 3 ? end * bits : (end - 1) * bits + 4;
        if (group != 0 && group % 32 == 0 && first % group == 0 && count % group == 0 &&
            count > 0 && blocks.size() == count / 32 * 20 && reads_to <= source.qcodes.size() &&
            headers_hold_group_params<Dtype>(source, first, count, blocks))
            return kernel.lsb0_codes_equal_q4_1(source.qcodes.data() + first / 8 * bits,
                                                static_cast<unsigned>(bits),
                                                static_cast<size_t>(count / 32), blocks.data());
    }
    WholeGroups runs;
    widen_whole_groups<Dtype>(source, first, count, 32, runs);
    if (runs.count == 0 || blocks.size() != count / 32 * 20) return false;
    return kernel.lsb0_runs_equal_q4_1(runs.words, source.bits, static_cast<size_t>(source.group),
                                       runs.count, runs.scales, runs.mins, blocks.data());
}

// The group loop for one parameter type (a constant, so each group's scale and min load inline).
// With `fused` the codes are read from the stream per run; otherwise `codes` holds them already.
template <SourceFloat Dtype>
void scale_groups(const QuantView& source, uint64_t first, uint8_t* codes, std::span<float> out,
                  const VerifyKernels& kernel, bool fused) {
    if (fused && whole_groups<Dtype>(source, first, out, kernel)) return;
    uint64_t index = first;
    size_t k = 0;
    while (k < out.size()) {
        const uint64_t group_index = index / source.group;
        const uint64_t group_end = (group_index + 1) * source.group;
        const size_t run = static_cast<size_t>(
            std::min<uint64_t>(group_end - index, static_cast<uint64_t>(out.size() - k)));
        const float scale = param_at<Dtype>(source.scales, group_index);
        const float min = param_at<Dtype>(source.mins, group_index);
        // mcq_value(code, scale, min) for each code of the run, in verify's kernel path.
        if (fused)
            packed_run(source, index, run, scale, min, codes, out.data() + k, kernel);
        else
            kernel.scale_codes(codes + k, run, scale, min, out.data() + k);
        k += run;
        index += run;
    }
}

}  // namespace

void expected_from_quantized(const QuantView& source, uint64_t first, std::span<uint8_t> codes,
                             std::span<float> out) {
    const VerifyKernels& kernel = kernels();
    const bool fused = kernel.scale_lsb0_groups != nullptr && source.bits >= 1 && source.bits <= 4;
    const std::span<uint8_t> chunk_codes = codes.first(out.size());
    if (!fused) extract_lsb0_codes(source.qcodes, source.bits, first, chunk_codes);
    switch (source.param_dtype) {
        case SourceFloat::F16:
            return scale_groups<SourceFloat::F16>(source, first, chunk_codes.data(), out, kernel,
                                                  fused);
        case SourceFloat::BF16:
            return scale_groups<SourceFloat::BF16>(source, first, chunk_codes.data(), out, kernel,
                                                   fused);
        case SourceFloat::F32:
            return scale_groups<SourceFloat::F32>(source, first, chunk_codes.data(), out, kernel,
                                                  fused);
    }
}

bool quantized_equals_q4_1(const QuantView& source, uint64_t first, uint64_t count,
                           std::span<const uint8_t> blocks) {
    const VerifyKernels& kernel = kernels();
    if (kernel.lsb0_runs_equal_q4_1 == nullptr || kernel.lsb0_codes_equal_q4_1 == nullptr ||
        source.bits < 1 || source.bits > 4)
        return false;
    switch (source.param_dtype) {
        case SourceFloat::F16:
            return whole_groups_equal_q4_1<SourceFloat::F16>(source, first, count, blocks, kernel);
        case SourceFloat::BF16:
            return whole_groups_equal_q4_1<SourceFloat::BF16>(source, first, count, blocks, kernel);
        case SourceFloat::F32:
            return whole_groups_equal_q4_1<SourceFloat::F32>(source, first, count, blocks, kernel);
    }
    return false;
}

void expected_from_float(SourceFloat dtype, std::span<const uint8_t> data, uint64_t first,
                         std::span<float> out) {
    switch (dtype) {
        case SourceFloat::F32:
            for (size_t i = 0; i < out.size(); ++i)
                out[i] = float_from_bits(load_u32le(&data[4 * (first + i)]));
            break;
        case SourceFloat::F16:
            for (size_t i = 0; i < out.size(); ++i)
                out[i] = half_bits_to_float(load_u16le(&data[2 * (first + i)]));
            break;
        case SourceFloat::BF16:
            for (size_t i = 0; i < out.size(); ++i)
                out[i] = bf16_bits_to_float(load_u16le(&data[2 * (first + i)]));
            break;
    }
}

}  // namespace rebox::verify_ref
