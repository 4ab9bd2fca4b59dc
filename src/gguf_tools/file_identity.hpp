// Whether two paths name the same file (device and inode, so hard links, symlinks and "./x" vs "x"
// are caught), used to refuse an output that would overwrite an input.
#pragma once

#include <filesystem>

namespace rebox {

// True when both paths exist and are the same inode on the same device.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

}  // namespace rebox
