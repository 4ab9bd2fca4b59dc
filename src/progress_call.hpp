// Calls the caller's progress callback so that whatever it throws reaches the caller as a
// rebox::Error (class cancelled) from the call itself, never std::terminate from a ticker thread.
#pragma once

#include "rebox/rebox.hpp"

namespace rebox {

// Returns the callback's answer (false: cancel). A rebox::Error it throws passes unchanged; any
// other exception becomes Error(ExitClass::cancelled, "", "progress callback", "threw: WHAT").
bool call_progress(const ProgressCallback& progress, const Progress& at);

}  // namespace rebox
