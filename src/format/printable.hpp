// Makes untrusted names (tensor names, JSON keys) safe to put in a one-line error message.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace rebox::detail {

// Control bytes become \xNN so a hostile name cannot break the message onto several lines.
inline std::string printable(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char c : text) {
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte == 0x7f) {
            char escaped[8];
            std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
            out += escaped;
        } else {
            out += c;
        }
    }
    return out;
}

}  // namespace rebox::detail
