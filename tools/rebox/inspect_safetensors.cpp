// rebox inspect for safetensors: placeholder until the safetensors reader (format-st branch) is
// merged; the full version (header size, metadata with "mcq" pretty-printed, tensor table, --json)
// replaces this file then.
#include "inspect.hpp"
#include "rebox/error.hpp"

namespace rebox::cli {

int inspect_safetensors(const InspectArgs& args) {
    throw_input_error(args.file, "", "not a GGUF file; safetensors inspection is not built yet");
}

}  // namespace rebox::cli
