// SIGINT/SIGTERM/SIGHUP during any writing command (convert, split, merge, meta): the handler
// removes every temporary file and rolls back an output set caught between its renames, then exits
// 128 + signal.
#pragma once

namespace rebox::cli {

void install_signal_cleanup();

}  // namespace rebox::cli
