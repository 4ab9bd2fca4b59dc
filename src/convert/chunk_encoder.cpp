// Dispatches a chunk to the encode/ kernel its plan names; float copies are plain byte moves.
#include "chunk_encoder.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "arch/transforms.hpp"
#include "encode/block_encode.hpp"
#include "encode/fp4_block_encode.hpp"
#include "encode/int_block_encode.hpp"
#include "format/half.hpp"
#include "source/fp8_values.hpp"
#include "source/source_values.hpp"

namespace rebox::convert_detail {
namespace {

constexpr size_t kChunk = 4096;  // values per step through a stack buffer

// Calls fn(done, n) for [0, count) in consecutive steps of at most kChunk values.
template <typename Fn>
void for_each_chunk(uint64_t count, Fn&& fn) {
    for (uint64_t done = 0; done < count;) {
        const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, count - done));
        fn(done, n);
        done += n;
    }
}

// out is not necessarily aligned for T: dequantize into a small aligned buffer, then copy the
// little-endian values out (fp16 bits for dequant_f16, binary32 for dequant_f32).
template <typename T, typename View>
void dequantize_through_buffer(const View& q, uint64_t first, uint64_t count,
                               std::span<uint8_t> out,
                               void (*dequantize)(const View&, uint64_t, size_t, T*)) {
    T buffer[kChunk];
    for_each_chunk(count, [&](uint64_t done, size_t n) {
        dequantize(q, first + done, n, buffer);
        std::memcpy(out.data() + done * sizeof(T), buffer, n * sizeof(T));
    });
}

// Stores the chunk's binary32 values (dequantized, or widened from a float source) as 16-bit
// floats: fp16 or bf16. The plan checked that every value is exact in the target type, so the
// round-to-nearest narrowing never rounds.
void narrow_to_16(const SourceTensor& source, uint64_t first, uint64_t count,
                  std::span<uint8_t> out, uint16_t (*narrow)(float)) {
    float values[kChunk];
    for_each_chunk(count, [&](uint64_t done, size_t n) {
        source_values_f32(source, first + done, n, values);
        for (size_t i = 0; i < n; ++i) {
            const uint16_t bits = narrow(values[i]);
            std::memcpy(out.data() + (done + i) * 2, &bits, 2);
        }
    });
}

// A float source's values [first, first+count) widened exactly to binary32, little-endian.
void widen_to_f32(const SourceTensor& source, uint64_t first, uint64_t count,
                  std::span<uint8_t> out) {
    float values[kChunk];
    for_each_chunk(count, [&](uint64_t done, size_t n) {
        source_values_f32(source, first + done, n, values);
        std::memcpy(out.data() + done * 4, values, n * 4);
    });
}

// gemma norms: each value + 1 in the converter's arithmetic (arch/transforms.hpp), as F32.
// A float source's values [first, first+count) through one of the converter's float steps (a
// gemma norm's + 1, A_log's -exp), F16 sources in F16 and the others in binary32 as its
// prepare_tensors holds them, stored as F32.
void float_step_to_f32(const SourceTensor& source, uint64_t first, uint64_t count,
                       std::span<uint8_t> out, float (*on_f16)(uint16_t), float (*on_f32)(float)) {
    float values[kChunk];
    for_each_chunk(count, [&](uint64_t done, size_t n) {
        if (source.float_dtype == FloatDtype::F16) {
            const uint8_t* in = source.float_data.data() + (first + done) * 2;
            for (size_t i = 0; i < n; ++i) {
                uint16_t bits;
                std::memcpy(&bits, in + i * 2, 2);
                values[i] = on_f16(bits);
            }
        } else {
            source_values_f32(source, first + done, n, values);
            for (size_t i = 0; i < n; ++i) values[i] = on_f32(values[i]);
        }
        std::memcpy(out.data() + done * 4, values, n * 4);
    });
}

}  // namespace

UnitSize output_unit(const TensorPlan& plan) {
    switch (plan.encoding) {
        case Encoding::q4_1_repack:
            return {kQ4_1BlockBytes, kQBlockValues};
        case Encoding::q5_1_repack:
            return {kQ5_1BlockBytes, kQBlockValues};
        case Encoding::q4_0_shift:
            return {kQ4_0BlockBytes, kQBlockValues};
        case Encoding::q5_0_shift:
            return {kQ5_0BlockBytes, kQBlockValues};
        case Encoding::q8_0_shift:
            return {kQ8_0BlockBytes, kQBlockValues};
        case Encoding::q4_1_int:
            return {kQ4_1BlockBytes, kQBlockValues};
        case Encoding::q5_1_int:
            return {kQ5_1BlockBytes, kQBlockValues};
        case Encoding::mxfp4_repack:
            return {kMxfp4BlockBytes, kMxfp4BlockValues};
        case Encoding::nvfp4_repack:
            return {kNvfp4BlockBytes, kNvfp4BlockValues};
        case Encoding::dequant_f32:
        case Encoding::copy_f32:
        case Encoding::widen_f32:
        case Encoding::add_one_f32:
        case Encoding::neg_exp_f32:
            return {4, 1};
        case Encoding::dequant_f16:
        case Encoding::dequant_bf16:
        case Encoding::copy_f16:
        case Encoding::copy_bf16:
        case Encoding::recast_f16:
        case Encoding::recast_bf16:
            return {2, 1};
    }
    throw std::logic_error("unknown encoding");
}

namespace {

// The GGUF bytes of source values [first, first+count) in the plan's encoding (first and count
// whole blocks for block types).
void encode_values(const SourceTensor& source, const TensorPlan& plan, uint64_t first,
                   uint64_t count, std::span<uint8_t> out) {
    const ScaleRule rule =
        plan.zero_code_groups_get_zero_scale ? ScaleRule::zero_when_codes_zero : ScaleRule::exact;
    switch (plan.encoding) {
        case Encoding::q4_1_repack:
            encode_q4_1(*source.quant, first / kQBlockValues, count / kQBlockValues, out.data(),
                        rule);
            return;
        case Encoding::q5_1_repack:
            encode_q5_1(*source.quant, first / kQBlockValues, count / kQBlockValues, out.data(),
                        rule);
            return;
        case Encoding::q4_0_shift:
            encode_q4_0_int(*source.int_quant, first / kQBlockValues, count / kQBlockValues,
                            out.data(), rule);
            return;
        case Encoding::q5_0_shift:
            encode_q5_0_int(*source.int_quant, first / kQBlockValues, count / kQBlockValues,
                            out.data(), rule);
            return;
        case Encoding::q8_0_shift:
            encode_q8_0_int(*source.int_quant, first / kQBlockValues, count / kQBlockValues,
                            out.data(), rule);
            return;
        case Encoding::q4_1_int:
            encode_q4_1_int(*source.int_quant, first / kQBlockValues, count / kQBlockValues,
                            out.data());
            return;
        case Encoding::q5_1_int:
            encode_q5_1_int(*source.int_quant, first / kQBlockValues, count / kQBlockValues,
                            out.data());
            return;
        case Encoding::mxfp4_repack:
            encode_mxfp4(*source.fp4, first / kMxfp4BlockValues, count / kMxfp4BlockValues,
                         out.data());
            return;
        case Encoding::nvfp4_repack:
            encode_nvfp4(*source.fp4, first / kNvfp4BlockValues, count / kNvfp4BlockValues,
                         out.data());
            return;
        case Encoding::dequant_f16:
            if (source.int_quant || source.fp4 || source.fp8)  // the plan checked: exact in fp16
                narrow_to_16(source, first, count, out, float_to_half);
            else
                dequantize_through_buffer<uint16_t>(*source.quant, first, count, out,
                                                    dequantize_f16);
            return;
        case Encoding::dequant_f32:
            if (source.fp4)
                dequantize_through_buffer<float>(*source.fp4, first, count, out,
                                                 dequantize_fp4_f32);
            else if (source.int_quant)
                dequantize_through_buffer<float>(*source.int_quant, first, count, out,
                                                 dequantize_int_f32);
            else if (source.fp8)
                dequantize_through_buffer<float>(*source.fp8, first, count, out,
                                                 dequantize_fp8_f32);
            else
                dequantize_through_buffer<float>(*source.quant, first, count, out, dequantize_f32);
            return;
        case Encoding::copy_f32:
        case Encoding::copy_f16:
        case Encoding::copy_bf16: {
            const size_t width = float_dtype_size(source.float_dtype);
            std::memcpy(out.data(), source.float_data.data() + first * width, count * width);
            return;
        }
        case Encoding::widen_f32:
            widen_to_f32(source, first, count, out);
            return;
        case Encoding::add_one_f32:
            float_step_to_f32(source, first, count, out, arch::norm_plus_one_f16,
                              arch::norm_plus_one_f32);
            return;
        case Encoding::neg_exp_f32:
            float_step_to_f32(source, first, count, out, arch::neg_exp_f16, arch::neg_exp_f32);
            return;
        case Encoding::dequant_bf16:
        case Encoding::recast_bf16:
            narrow_to_16(source, first, count, out, float_to_bf16);
            return;
        case Encoding::recast_f16:
            narrow_to_16(source, first, count, out, float_to_half);
            return;
    }
}

}  // namespace

namespace {

void encode_chunk_unchecked(const SourceTensor& source, const TensorPlan& plan, const Chunk& chunk,
                            std::span<uint8_t> out) {
    if (plan.is_computed()) {  // F32 values made by the plan
        std::memcpy(out.data(), plan.computed.data() + chunk.first, chunk.count * 4);
        return;
    }
    if (plan.transpose.heads != 0) {  // single values gathered (one-value encodings only)
        const TensorPlan::HeadTranspose& t = plan.transpose;
        const size_t width = out.size() / chunk.count;
        for (uint64_t k = 0; k < chunk.count; ++k) {
            const uint64_t at = chunk.first + k;
            const uint64_t j = at % t.rows, c = at / t.rows % t.columns,
                           h = at / (t.rows * t.columns);
            const uint64_t stride = t.source_columns != 0 ? t.source_columns : t.columns;
            encode_values(source, plan, (h * t.head_rows + j) * stride + t.column_offset + c, 1,
                          out.subspan(k * width, width));
        }
        return;
    }
    if (plan.row_source.empty()) return encode_values(source, plan, chunk.first, chunk.count, out);
    // Permuted rows: the chunk is whole output rows (split_into_chunks); each is encoded from the
    // source row it holds, in whatever encoding the plan chose.
    const uint64_t row_bytes = out.size() / (chunk.count / plan.row_values);
    for (uint64_t r = chunk.first / plan.row_values, done = 0; done < chunk.count;
         ++r, done += plan.row_values) {
        encode_values(source, plan, uint64_t{plan.row_source[r]} * plan.row_values, plan.row_values,
                      out.subspan(done / plan.row_values * row_bytes, row_bytes));
    }
}

}  // namespace

void encode_chunk(const SourceTensor& source, const TensorPlan& plan, const Chunk& chunk,
                  std::span<uint8_t> out) {
    // The kernels' own checks (a scale or value not exact in fp16, q - z out of range) cannot fail
    // after the plan accepted the tensor: when one does, the plan is wrong, and the error says so
    // and names the tensor.
    try {
        encode_chunk_unchecked(source, plan, chunk, out);
    } catch (const Error& e) {
        if (e.exit_class() != ExitClass::internal) throw;
        throw Error(ExitClass::internal, "", plan.gguf_name + ": " + e.field(),
                    "internal error: " + e.problem() + " although the plan accepted the tensor " +
                        "(please report this)");
    }
}

}  // namespace rebox::convert_detail
