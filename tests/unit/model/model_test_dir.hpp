// A scratch model directory for model-stage tests: created empty under the system temp folder,
// removed with everything in it when the object goes away.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace rebox::test {

class ModelTestDir {
  public:
    ModelTestDir() {
        std::string pattern =
            (std::filesystem::temp_directory_path() / "rebox-model-XXXXXX").string();
        if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
        path_ = pattern;
    }
    ~ModelTestDir() {
        std::error_code ignored;
        std::filesystem::remove_all(path_, ignored);
    }
    ModelTestDir(const ModelTestDir&) = delete;
    ModelTestDir& operator=(const ModelTestDir&) = delete;

    const std::filesystem::path& path() const { return path_; }

    // Writes text to path()/relative, creating parent folders.
    std::filesystem::path write(const std::filesystem::path& relative,
                                const std::string& text) const {
        const std::filesystem::path file = path_ / relative;
        std::filesystem::create_directories(file.parent_path());
        std::ofstream out(file, std::ios::binary);
        out << text;
        if (!out) throw std::runtime_error("cannot write " + file.string());
        return file;
    }

  private:
    std::filesystem::path path_;
};

}  // namespace rebox::test
