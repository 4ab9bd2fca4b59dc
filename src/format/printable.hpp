// Makes untrusted text (tensor names, JSON keys, GGUF strings) safe to put in a one-line message:
// the one control-byte escaper outside verify/.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rebox::detail {

// True for the bytes that could break a message onto several lines or move the cursor.
inline bool is_control_byte(unsigned char byte) { return byte < 0x20 || byte == 0x7f; }

// Appends \xNN (two lowercase hex digits).
inline void append_hex_escape(std::string& out, unsigned char byte) {
    static constexpr char kHex[] = "0123456789abcdef";
    out += "\\x";
    out += kHex[byte >> 4];
    out += kHex[byte & 15];
}

// Control bytes become \xNN so a hostile name cannot break the message onto several lines; text
// longer than max_shown bytes is cut there and "..." appended.
inline std::string printable(std::string_view text, size_t max_shown = std::string_view::npos) {
    std::string out;
    out.reserve(text.size() < max_shown ? text.size() : max_shown);
    for (size_t i = 0; i < text.size() && i < max_shown; ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if (is_control_byte(byte))
            append_hex_escape(out, byte);
        else
            out += text[i];
    }
    if (text.size() > max_shown) out += "...";
    return out;
}

}  // namespace rebox::detail
