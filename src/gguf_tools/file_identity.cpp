// same_file(): stat() both paths and compare st_dev/st_ino.
#include "gguf_tools/file_identity.hpp"

#include <sys/stat.h>

namespace rebox {

bool same_file(const std::filesystem::path& a, const std::filesystem::path& b) {
    struct stat sa {};
    struct stat sb {};
    if (::stat(a.c_str(), &sa) != 0 || ::stat(b.c_str(), &sb) != 0) return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

}  // namespace rebox
