// verify's inner loops as a table of kernels with one scalar, one SSE2 and one AVX2 version each,
// chosen once per process: the widest the CPU runs (__builtin_cpu_supports), or the one named by
// REBOX_VERIFY_KERNELS=scalar|sse2|avx2 (tests force each path that way). Every version performs
// the same IEEE binary32 operations in the same order as the scalar loop (a separate multiply and
// add, no fused multiply-add), so all paths give bit-identical values. verify's own code: it
// shares nothing with the encoder's or the quantizer's kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rebox::verify_ref {

enum class KernelPath { scalar, sse2, avx2 };

struct VerifyKernels {
    KernelPath path;
    // out[j] = float(codes[j]) * scale + min for j < count (mcq-v1 / MLX affine values).
    void (*scale_codes)(const uint8_t* codes, size_t count, float scale, float min, float* out);
    // Byte j of `bytes` -> codes[2j] = its low nibble, codes[2j+1] = its high nibble.
    void (*split_nibbles)(const uint8_t* bytes, size_t byte_count, uint8_t* codes);
    // Q4_1 blocks (d | m | qs[16], 20 bytes) -> 32 values each: (qs[j] & 15) * d + m at j,
    // (qs[j] >> 4) * d + m at j + 16.
    void (*dequantize_q4_1)(const uint8_t* blocks, size_t block_count, float* out);
    // Aligned 8-code groups of a `bits`-bit lsb0 stream, bits 1..4: group k's codes are the low
    // 8 * bits bits of the little-endian 32-bit word at bytes + k * bits (the caller makes sure
    // those 4 bytes are inside the stream); writes out[8k + i] = float(code i) * scale + min.
    // nullptr on paths without it (codes are then extracted first, then scaled).
    void (*scale_lsb0_groups)(const uint8_t* bytes, unsigned bits, size_t group_count, float scale,
                              float min, float* out);
    // The same over `run_count` quantization groups of `run_codes` codes each (a multiple of 8):
    // group r uses scales[r] and mins[r]; bytes starts at an 8-code boundary. nullptr where
    // scale_lsb0_groups is.
    void (*scale_lsb0_runs)(const uint8_t* bytes, unsigned bits, size_t run_codes, size_t run_count,
                            const float* scales, const float* mins, float* out);
    // The same runs (run_codes a multiple of 32) held by consecutive Q4_1 blocks (`blocks`,
    // run_codes / 32 per run): true when every value float(code) * scales[r] + mins[r] has the
    // same 32-bit pattern as its block's nibble * d + m, proved per block without storing a value:
    // each code equals its nibble, and the 16 values a code 0..15 takes under (scales[r], mins[r])
    // equal, bit for bit, the 16 it takes under (d, m). False when either differs (a value may
    // then still be equal, e.g. any code under a zero scale): the caller compares value by value.
    // nullptr where scale_lsb0_runs is.
    bool (*lsb0_runs_equal_q4_1)(const uint8_t* bytes, unsigned bits, size_t run_codes,
                                 size_t run_count, const float* scales, const float* mins,
                                 const uint8_t* blocks);
    // Only the codes of those blocks: true when each of `block_count` consecutive Q4_1 blocks'
    // 32 nibbles equals its 32 codes of the `bits`-bit lsb0 stream at `bytes` (4 * bits bytes a
    // block; 1 and 2 bits read 4 bytes at each 8-code group, so up to 3 bytes past the last
    // block's). With d and m widening to the group's own scale and min (the caller's check) that
    // settles every value. nullptr where lsb0_runs_equal_q4_1 is.
    bool (*lsb0_codes_equal_q4_1)(const uint8_t* bytes, unsigned bits, size_t block_count,
                                  const uint8_t* blocks);
};

// The kernels in use (selected on first use).
const VerifyKernels& kernels();
// Re-reads REBOX_VERIFY_KERNELS and the CPU, and returns the path now in use (a path the CPU
// cannot run falls back to the widest it can). For tests; not thread-safe against running checks.
KernelPath select_kernels();
std::string_view kernel_path_name(KernelPath path);

namespace kernels_detail {
extern const VerifyKernels kScalar;
extern const VerifyKernels kSse2;  // x86-64 only
extern const VerifyKernels kAvx2;  // x86-64 only, compiled with -mavx2
void split_nibbles_sse2(const uint8_t* bytes, size_t byte_count, uint8_t* codes);  // both use it
}  // namespace kernels_detail

}  // namespace rebox::verify_ref
