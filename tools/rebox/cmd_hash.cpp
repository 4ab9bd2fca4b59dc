// placeholder
#include "gguf_tool_commands.hpp"
namespace rebox::cli {
ToolCommand add_hash_command(CLI::App& app) { return {app.add_subcommand("hash", "todo"), [] { return 1; }}; }
}
