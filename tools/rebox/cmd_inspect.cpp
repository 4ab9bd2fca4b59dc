// rebox inspect FILE [--json] [--header]: detects the format by its first bytes ("GGUF" magic, or a
// .gguf name so a broken GGUF is reported as one) and otherwise reads the file as safetensors.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "inspect.hpp"
#include "rebox/error.hpp"

namespace rebox::cli {

int run_inspect(const InspectArgs& args) {
    if (args.json && args.header)
        throw_input_error(args.file, "--header", "cannot be combined with --json");
    std::ifstream in(args.file, std::ios::binary);
    if (!in) throw_input_error(args.file, "", std::string("cannot open: ") + std::strerror(errno));
    char magic[4] = {};
    in.read(magic, sizeof magic);
    const bool gguf_magic = in.gcount() == 4 && std::memcmp(magic, "GGUF", 4) == 0;
    const bool gguf_name = args.file.size() >= 5 && args.file.ends_with(".gguf");
    if (gguf_magic || gguf_name || args.header) return inspect_gguf(args);
    return inspect_safetensors(args);
}

}  // namespace rebox::cli
