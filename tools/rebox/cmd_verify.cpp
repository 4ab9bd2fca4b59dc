// rebox verify: placeholder so the CLI links while the command is being built on its branch.
#include "commands.hpp"
#include "rebox/error.hpp"

namespace rebox::cli {
int run_verify(const VerifyArgs&) { throw Error(ExitClass::input, "verify: not implemented yet"); }
}  // namespace rebox::cli
