// The one error type for every failure a user can cause: a message built where the fact is known
// ("FILE: FIELD: what is wrong (expected ...)") and the exit-code class the CLI maps it to.
#pragma once

#include <stdexcept>
#include <string>

namespace rebox {

// Exit codes of the CLI: 1 usage/IO/malformed input, 2 BLOCKER (cannot be carried exactly),
// 3 verification failed.
enum class ExitClass : int { input = 1, blocker = 2, verification = 3 };

class Error : public std::runtime_error {
public:
    Error(ExitClass exit_class, const std::string& message)
        : std::runtime_error(message), exit_class_(exit_class) {}
    ExitClass exit_class() const { return exit_class_; }
    int exit_code() const { return static_cast<int>(exit_class_); }

private:
    ExitClass exit_class_;
};

// "FILE: FIELD: WHAT" or "FILE: FIELD: WHAT (expected EXPECTED)"; empty parts are left out.
std::string error_message(const std::string& file, const std::string& field, const std::string& what,
                          const std::string& expected = "");

// A malformed or unreadable input (exit class 1).
[[noreturn]] void throw_input_error(const std::string& file, const std::string& field,
                                    const std::string& what, const std::string& expected = "");

}  // namespace rebox
