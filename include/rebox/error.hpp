// The one error type for every failure: where it is (file, then field or tensor), what is wrong,
// what was expected, and the exit-code class the CLI maps it to. BLOCKERs travel as data: a plan
// lists them, and a conversion refused because of them throws one Error carrying the whole list.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rebox {

// Exit codes of the CLI: 1 usage/IO/malformed input, 2 BLOCKER (cannot be carried exactly),
// 3 verification failed, 70 an internal invariant broke (a bug: please report it), 130 cancelled
// (the progress callback returned false, or SIGINT in the CLI).
enum class ExitClass : int {
    input = 1,
    blocker = 2,
    verification = 3,
    internal = 70,
    cancelled = 130
};

// A tensor (or a model-level file/field) that cannot be carried over exactly, why, and what would
// fix it.
struct Blocker {
    std::string tensor;  // tensor name, or a file/field for model-level blockers
    std::string reason;
    std::string fix;
    // > 0: allow_lossless_fallback would carry the tensor as an exact F16/F32 copy this many bytes
    // larger than its packed source (the plan adds the whole file's growth to `fix`).
    uint64_t fallback_growth_bytes = 0;
};

class Error : public std::runtime_error {
  public:
    // what() is "FILE: FIELD: PROBLEM (expected EXPECTED)", empty parts left out.
    Error(ExitClass exit_class, std::string file, std::string field, std::string problem,
          std::string expected = "");
    // A problem that names no one file or field (what() is the problem).
    Error(ExitClass exit_class, std::string problem);
    // A conversion refused before anything was written: what() names the model directory and
    // lists every BLOCKER, one per line.
    Error(std::string model_dir, std::vector<Blocker> blockers);

    ExitClass exit_class() const { return exit_class_; }
    int exit_code() const { return static_cast<int>(exit_class_); }
    const std::string& file() const { return file_; }    // may be empty
    const std::string& field() const { return field_; }  // field or tensor name; may be empty
    const std::string& problem() const { return problem_; }
    const std::string& expected() const { return expected_; }
    const std::vector<Blocker>& blockers() const { return blockers_; }  // blocker class only

  private:
    ExitClass exit_class_;
    std::string file_, field_, problem_, expected_;
    std::vector<Blocker> blockers_;
};

// "FILE: FIELD: WHAT" or "FILE: FIELD: WHAT (expected EXPECTED)"; empty parts are left out.
std::string error_message(const std::string& file, const std::string& field,
                          const std::string& what, const std::string& expected = "");

// A malformed or unreadable input (exit class 1).
[[noreturn]] void throw_input_error(const std::string& file, const std::string& field,
                                    const std::string& what, const std::string& expected = "");

}  // namespace rebox
