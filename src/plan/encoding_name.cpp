// Printable names of the plan's encodings (used by `rebox plan`, reports and messages).
#include "rebox/plan/plan.hpp"

namespace rebox {

const char* encoding_name(Encoding encoding) {
    switch (encoding) {
        case Encoding::q4_1_repack:
            return "q4_1_repack";
        case Encoding::q5_1_repack:
            return "q5_1_repack";
        case Encoding::dequant_f32:
            return "dequant_f32";
        case Encoding::copy_f32:
            return "copy_f32";
        case Encoding::copy_f16:
            return "copy_f16";
        case Encoding::copy_bf16:
            return "copy_bf16";
        case Encoding::widen_f32:
            return "widen_f32";
    }
    return "?";
}

}  // namespace rebox
