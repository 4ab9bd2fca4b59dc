// rebox::Error: the structured fields and the one message format built from them.
#include "rebox/error.hpp"

namespace rebox {
namespace {

std::string blocker_message(const std::string& model_dir, const std::vector<Blocker>& blockers) {
    std::string message = model_dir + ": " + std::to_string(blockers.size()) +
                          (blockers.size() == 1 ? " BLOCKER" : " BLOCKERs") +
                          ": cannot be carried over exactly; nothing was written";
    for (const Blocker& b : blockers) {
        message += "\nBLOCKER " + b.tensor + ": " + b.reason;
        if (!b.fix.empty()) message += " (fix: " + b.fix + ")";
    }
    return message;
}

}  // namespace

std::string error_message(const std::string& file, const std::string& field,
                          const std::string& what, const std::string& expected) {
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

Error::Error(ExitClass exit_class, std::string file, std::string field, std::string problem,
             std::string expected)
    : std::runtime_error(error_message(file, field, problem, expected)),
      exit_class_(exit_class),
      file_(std::move(file)),
      field_(std::move(field)),
      problem_(std::move(problem)),
      expected_(std::move(expected)) {}

Error::Error(ExitClass exit_class, std::string problem)
    : std::runtime_error(problem), exit_class_(exit_class), problem_(std::move(problem)) {}

Error::Error(std::string model_dir, std::vector<Blocker> blockers)
    : std::runtime_error(blocker_message(model_dir, blockers)),
      exit_class_(ExitClass::blocker),
      file_(std::move(model_dir)),
      problem_(std::to_string(blockers.size()) + " BLOCKER(s)"),
      blockers_(std::move(blockers)) {}

void throw_input_error(const std::string& file, const std::string& field, const std::string& what,
                       const std::string& expected) {
    throw Error(ExitClass::input, file, field, what, expected);
}

}  // namespace rebox
