// This process's resident set as the kernel reports it (/proc/self/smaps), for tests of page
// releases.
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace rebox::test {

// Resident KiB of the mapping that contains `address` (-1 when no mapping does).
inline long resident_kib(const void* address) {
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool inside = false;
    const auto want = reinterpret_cast<uintptr_t>(address);
    while (std::getline(smaps, line)) {
        unsigned long long begin = 0, end = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx ", &begin, &end) == 2 &&
            line.find(':') > line.find('-')) {
            inside = begin <= want && want < end;
            continue;
        }
        if (inside && line.rfind("Rss:", 0) == 0) return std::stol(line.substr(4));
    }
    return -1;
}

}  // namespace rebox::test
