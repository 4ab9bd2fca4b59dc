// The rebox version, defined once by CMake's project(VERSION): printed by `rebox --version` and
// written into every GGUF as the rebox.version KV.
#pragma once

namespace rebox {

// "MAJOR.MINOR.PATCH", e.g. "0.1.0".
const char* version();

}  // namespace rebox
