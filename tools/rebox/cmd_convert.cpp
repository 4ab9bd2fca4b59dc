// rebox convert: placeholder so the CLI links while the command is being built on its branch.
#include "commands.hpp"
#include "rebox/error.hpp"

namespace rebox::cli {
int run_convert(const ConvertArgs&) { throw Error(ExitClass::input, "convert: not implemented yet"); }
}  // namespace rebox::cli
