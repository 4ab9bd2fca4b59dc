// The GGUF editing, comparison, quantizing and checking commands (meta, diff, hash, quantize,
// check): each registers its own subcommand and options on the app and returns the function that
// runs it once parsed, so main() needs one line per command.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace rebox::cli {

struct ToolCommand {
    CLI::App* command;
    std::function<int()> run;  // returns the exit code; throws rebox::Error like the others
};

ToolCommand add_meta_command(CLI::App& app);
ToolCommand add_diff_command(CLI::App& app);
ToolCommand add_hash_command(CLI::App& app);
ToolCommand add_quantize_command(CLI::App& app);
ToolCommand add_check_command(CLI::App& app);

}  // namespace rebox::cli
