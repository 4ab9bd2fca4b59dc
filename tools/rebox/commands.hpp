// The rebox subcommands: each takes its parsed arguments, prints its output, and returns the exit
// code; user-caused failures are thrown as rebox::Error and mapped to exit codes by main().
#pragma once

#include <optional>
#include <string>

namespace rebox::cli {

struct InspectArgs {
    std::string file;
    bool json = false;    // one JSON object on stdout
    bool header = false;  // annotated hex of the first 24 bytes (GGUF)
};
int run_inspect(const InspectArgs& args);

struct ConvertArgs {
    std::string model_dir;
    std::string output;
    std::string outtype = "q4_1";  // q4_1 | f32
    bool verify = true;
    bool force = false;
    unsigned threads = 0;
    bool quiet = false;
    std::optional<std::string> json_report;
    std::optional<std::string> tokenizer_pre;
    std::optional<std::string> name;
};
int run_convert(const ConvertArgs& args);

struct VerifyArgs {
    std::string model_dir;
    std::string gguf;
    unsigned threads = 0;
    std::optional<std::string> json_report;
};
int run_verify(const VerifyArgs& args);

}  // namespace rebox::cli
