// --override-kv KEY=TYPE:VALUE as llama-quantize v0.4.0 reads it (common's
// string_parse_kv_override) and writes it into the output (gguf_set_val_*): int as UINT32, float
// as F32, bool (true/false), str (at most 127 bytes). Where llama-quantize takes text it cannot
// read (atol / atof of "abc" are 0, a negative int is written as its absolute value), rebox
// refuses.
#pragma once

#include <string>

#include "rebox/gguf_value.hpp"

namespace rebox {

// Throws Error (input class) naming --override-kv and the text for anything but KEY=int:N
// (0 <= N < 2^32), KEY=float:X (finite), KEY=bool:true|false, KEY=str:TEXT (<= 127 bytes) with a
// key of 1..127 bytes, and for general.alignment (llama-quantize pads to 32 whatever it says).
GgufKV parse_kv_override(const std::string& text);

}  // namespace rebox
