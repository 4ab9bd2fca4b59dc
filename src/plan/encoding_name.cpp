// Printable names of the plan's encodings and output types (used by `rebox plan`, the CLI's
// --outtype, reports and messages).
#include "plan/plan.hpp"

namespace rebox {

const char* encoding_name(Encoding encoding) {
    switch (encoding) {
        case Encoding::q4_1_repack:
            return "q4_1_repack";
        case Encoding::q5_1_repack:
            return "q5_1_repack";
        case Encoding::dequant_f32:
            return "dequant_f32";
        case Encoding::dequant_f16:
            return "dequant_f16";
        case Encoding::copy_f32:
            return "copy_f32";
        case Encoding::copy_f16:
            return "copy_f16";
        case Encoding::copy_bf16:
            return "copy_bf16";
        case Encoding::widen_f32:
            return "widen_f32";
        case Encoding::dequant_bf16:
            return "dequant_bf16";
        case Encoding::recast_f16:
            return "recast_f16";
        case Encoding::recast_bf16:
            return "recast_bf16";
        case Encoding::add_one_f32:
            return "add_one_f32";
        case Encoding::neg_exp_f32:
            return "neg_exp_f32";
        case Encoding::q4_0_shift:
            return "q4_0_shift";
        case Encoding::q5_0_shift:
            return "q5_0_shift";
        case Encoding::q8_0_shift:
            return "q8_0_shift";
        case Encoding::q4_1_int:
            return "q4_1_int";
        case Encoding::q5_1_int:
            return "q5_1_int";
        case Encoding::mxfp4_repack:
            return "mxfp4_repack";
        case Encoding::nvfp4_repack:
            return "nvfp4_repack";
    }
    return "?";
}

const char* outtype_name(OutType outtype) {
    switch (outtype) {
        case OutType::automatic:
            return "auto";
        case OutType::q4_1:
            return "q4_1";
        case OutType::f32:
            return "f32";
        case OutType::f16:
            return "f16";
        case OutType::bf16:
            return "bf16";
    }
    return "?";
}

std::optional<OutType> parse_outtype(const std::string& name) {
    for (OutType outtype :
         {OutType::automatic, OutType::q4_1, OutType::f32, OutType::f16, OutType::bf16})
        if (name == outtype_name(outtype)) return outtype;
    return std::nullopt;
}

}  // namespace rebox
