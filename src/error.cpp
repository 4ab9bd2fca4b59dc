// Message formatting for rebox::Error.
#include "rebox/error.hpp"

namespace rebox {

std::string error_message(const std::string& file, const std::string& field, const std::string& what,
                          const std::string& expected) {
    std::string message;
    for (const std::string* part : {&file, &field}) {
        if (!part->empty()) {
            message += *part;
            message += ": ";
        }
    }
    message += what;
    if (!expected.empty()) message += " (expected " + expected + ")";
    return message;
}

void throw_input_error(const std::string& file, const std::string& field, const std::string& what,
                       const std::string& expected) {
    throw Error(ExitClass::input, error_message(file, field, what, expected));
}

}  // namespace rebox
