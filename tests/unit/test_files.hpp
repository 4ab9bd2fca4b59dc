// File helpers every test uses: read a whole file (as a string of bytes or as a byte vector),
// write one, and a scratch directory per test.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace rebox::test {

// A whole file, byte for byte ("" when it cannot be read).
inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A whole file as bytes (empty when it cannot be read).
inline std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Writes (replaces) a whole file; throws when it cannot be written.
inline void write_file(const std::filesystem::path& path, std::string_view bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) throw std::runtime_error("cannot write " + path.string());
}
inline void write_file(const std::filesystem::path& path, const std::vector<uint8_t>& bytes) {
    write_file(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
}

// A fresh, empty scratch directory under <build>/test-work, named for the running test (or test
// suite, when made in SetUpTestSuite), the process and a counter, so that `ctest -j` runs and
// several directories in one test never collide. Removed with everything in it when the object
// goes away, unless the environment variable REBOX_KEEP_TEST_DIRS is set (then kept for
// inspection, and its path printed).
class ScratchDir {
  public:
    explicit ScratchDir(std::string_view label = {}) {
        static std::atomic<unsigned> counter{0};
        std::string name;
        const auto* unit = ::testing::UnitTest::GetInstance();
        if (const auto* info = unit->current_test_info())
            name = std::string(info->test_suite_name()) + "." + info->name();
        else if (const auto* suite = unit->current_test_suite())
            name = suite->name();
        else
            name = "test";
        if (!label.empty()) name += "." + std::string(label);
        for (char& c : name)
            if (c == '/' || c == ' ') c = '_';
        name += "." + std::to_string(::getpid()) + "." + std::to_string(counter++);
        path_ = std::filesystem::path(REBOX_BINARY_DIR) / "test-work" / name;
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    ~ScratchDir() {
        if (std::getenv("REBOX_KEEP_TEST_DIRS") != nullptr) {
            std::fprintf(stderr, "kept %s\n", path_.c_str());
            return;
        }
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;

    const std::filesystem::path& path() const { return path_; }
    operator const std::filesystem::path&() const { return path_; }
    std::filesystem::path operator/(const std::filesystem::path& relative) const {
        return path_ / relative;
    }
    std::string string() const { return path_.string(); }

    // Writes text to path()/relative, creating parent folders.
    std::filesystem::path write(const std::filesystem::path& relative,
                                std::string_view text) const {
        const std::filesystem::path file = path_ / relative;
        std::filesystem::create_directories(file.parent_path());
        write_file(file, text);
        return file;
    }

  private:
    std::filesystem::path path_;
};

}  // namespace rebox::test
