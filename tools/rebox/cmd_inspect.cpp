// rebox inspect: placeholder so the CLI links while the command is being built on its branch.
#include "commands.hpp"
#include "rebox/error.hpp"

namespace rebox::cli {
int run_inspect(const InspectArgs&) {
    throw Error(ExitClass::input, "inspect: not implemented yet");
}
}  // namespace rebox::cli
