// rebox::version(): the string CMake passes in from project(VERSION) (see CMakeLists.txt).
#include "rebox/version.hpp"

#ifndef REBOX_VERSION_STRING
#error "REBOX_VERSION_STRING must be defined by the build (CMakeLists.txt, project(VERSION))"
#endif

namespace rebox {

const char* version() { return REBOX_VERSION_STRING; }

}  // namespace rebox
