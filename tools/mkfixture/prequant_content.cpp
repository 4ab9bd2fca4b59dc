// Codes, zero points, scales and g_idx of the prequant fixtures. Scales are positive, |s| uniform
// in [0.002, 0.03]/sqrt(in/64) rounded to the scale dtype (every such bf16 value is fp16-exact);
// zero points and codes follow a per-tensor profile so one asymmetric 4-bit fixture needs Q4_0,
// Q4_1 and Q5_0 (docs/formats.md §5.0), and the defects change exactly one field.
#include "prequant_content.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "fp16.hpp"
#include "mlx_pack.hpp"  // float_to_bf16
#include "prng.hpp"

namespace mkfixture {

namespace {

enum class Profile { kWide, kWindow, kPow2 };

Profile profile_of(const std::string& module, const PrequantOptions& o) {
    if (o.bits == 8) return Profile::kWindow;  // 8-bit: only a window around z is exact (Q8_0)
    if (module.ends_with("k_proj")) return Profile::kWindow;
    if (module.ends_with("up_proj") && (o.bits == 4 || o.bits == 5)) return Profile::kPow2;
    return Profile::kWide;
}

uint16_t scale_bits_for(double value, const std::string& dtype) {
    return dtype == "bf16" ? float_to_bf16(static_cast<float>(value))
                           : float_to_half(static_cast<float>(value));
}

// g_idx per --desc-act: none/trivial k // group; blocks: aligned 32-column blocks rotated by one
// block (each block inside one group, groups out of order); actorder: even columns rank first, odd
// columns after them (a permutation that splits every 32-block across two groups).
std::vector<int32_t> make_g_idx(int64_t in, int64_t group, const std::string& desc_act) {
    std::vector<int32_t> g_idx(static_cast<size_t>(in));
    for (int64_t k = 0; k < in; ++k) {
        int64_t rank = k;
        if (desc_act == "blocks") {
            const int64_t blocks = in / 32;
            rank = ((k / 32 + 1) % blocks) * 32 + k % 32;
        } else if (desc_act == "actorder") {
            rank = (k % 2) * (in / 2) + k / 2;
        }
        g_idx[static_cast<size_t>(k)] = static_cast<int32_t>(rank / group);
    }
    return g_idx;
}

}  // namespace

LogicalQuant make_logical_quant(const std::string& module, int64_t out, int64_t in,
                                const PrequantOptions& o, uint64_t seed) {
    LogicalQuant t;
    t.out = out;
    t.in = in;
    t.bits = o.bits;
    t.group = o.group < 0 ? in : o.group;
    t.groups = (in + t.group - 1) / t.group;
    t.g_idx = make_g_idx(in, t.group, o.desc_act);
    const int32_t top = (1 << o.bits) - 1, half = 1 << (o.bits - 1);
    // GPTQ v1 stores z - 1, so a zero point 0 cannot be written (docs/formats.md §5.1).
    const bool v1 = o.format == "gptq" && o.checkpoint_format == "gptq";
    const int32_t z_min = v1 ? 1 : 0;
    const Profile profile = profile_of(module, o);

    SplitMix64 params = stream_for(seed, module + ".qparams");
    const size_t cells = static_cast<size_t>(t.groups * out);
    t.z.resize(cells);
    t.scale_bits.resize(cells);
    const double spread = 1.0 / std::sqrt(static_cast<double>(in) / 64.0);
    static const int32_t kPow2Zeros[] = {0, 1, 2, 4, 8, 16};  // 16 only at 5 bits
    const uint64_t pow2_choices = o.bits == 5 ? 6 : 5;
    for (size_t i = 0; i < cells; ++i) {
        t.scale_bits[i] = scale_bits_for(params.uniform(0.002, 0.03) * spread, o.scale_dtype);
        int32_t z = half;
        if (!o.sym) {
            if (profile == Profile::kPow2) {
                z = kPow2Zeros[params.next() % pow2_choices];
                if (z < z_min) z = z_min;
            } else {
                z = z_min +
                    static_cast<int32_t>(params.next() % static_cast<uint64_t>(top + 1 - z_min));
            }
        }
        t.z[i] = z;
    }

    // The first column k of group 0 (g_idx decides which columns belong to it).
    const int64_t k0 = std::find(t.g_idx.begin(), t.g_idx.end(), 0) - t.g_idx.begin();
    if (!o.sym && o.bits == 4 && profile == Profile::kWide) {
        t.z[0] = 13;            // with code 0: q - z = -13, outside Q4_0's [-8, 7]
        t.scale_bits[0] |= 1u;  // odd significand: 13*s needs more bits than fp16 has
    }
    if (!o.sym && profile == Profile::kPow2) t.z[0] = z_min;  // the top code then gives q - z >= 14

    SplitMix64 codes = stream_for(seed, module + ".codes");
    t.q.resize(static_cast<size_t>(out * in));
    for (int64_t n = 0; n < out; ++n) {
        for (int64_t k = 0; k < in; ++k) {
            const int32_t z = t.z[static_cast<size_t>(t.g_idx[static_cast<size_t>(k)] * out + n)];
            uint32_t q = codes.uniform_bits(o.bits);
            if (profile == Profile::kWindow && !o.sym) {  // q - z in [-half, half)
                const int32_t lo = std::max(0, z - half), hi = std::min(top, z + half - 1);
                q = static_cast<uint32_t>(
                    lo + static_cast<int32_t>(q % static_cast<uint32_t>(hi - lo + 1)));
            }
            t.q[static_cast<size_t>(n * in + k)] = q;
        }
    }
    if (!o.sym && o.bits == 4 && profile == Profile::kWide) t.q[static_cast<size_t>(k0)] = 0;
    if (!o.sym && profile == Profile::kPow2)
        t.q[static_cast<size_t>(k0)] = static_cast<uint32_t>(top);

    if (module == kPrequantDefectModule) {
        if (o.defect == "zero-out-of-range") {
            t.z[0] = 1 << o.bits;  // GPTQ v1 field 2^bits - 1
        } else if (o.defect == "g-idx-out-of-range") {
            t.g_idx.back() = static_cast<int32_t>(t.groups);
        } else if (o.defect == "int8-range") {
            t.z[0] = z_min;  // with code 255: q - z = 255 (254 in v1), outside Q8_0's [-128, 127]
            t.q[static_cast<size_t>(k0)] = static_cast<uint32_t>(top);
        } else if (o.defect == "inexact-bf16-scale") {
            t.scale_bits[0] =
                0x35ff;  // 2^-20 * (1 + 127/128): needs a step of 2^-27 < fp16's 2^-24
            if (t.q[static_cast<size_t>(k0)] == static_cast<uint32_t>(t.z[0]))
                t.q[static_cast<size_t>(k0)] ^= 1u;  // the scale must matter
        }
    }
    return t;
}

}  // namespace mkfixture
