// rebox inspect, split by format: the command picks GGUF (magic "GGUF" or a .gguf name) or
// safetensors and hands over to one of these; each prints text or one JSON object on stdout.
#pragma once

#include "commands.hpp"

namespace rebox::cli {

int inspect_gguf(const InspectArgs& args);
int inspect_safetensors(const InspectArgs& args);

}  // namespace rebox::cli
