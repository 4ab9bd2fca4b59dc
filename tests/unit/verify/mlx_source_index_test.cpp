// verify's MLX source detection reads config.json itself: it refuses one over config.json's size
// cap (1 MiB) from its size, before reading it, as the converter does.
#include "verify/sources/mlx_source_index.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "rebox/error.hpp"
#include "source/mcq_test_writer.hpp"
#include "test_files.hpp"

namespace rebox::verify_ref {
namespace {

TEST(VerifyMlxSourceIndex, ConfigOverItsSizeCapIsRefused) {
    const test::ScratchDir dir("verify-mlx-cap");
    test::write_safetensors(dir.path() / "model.safetensors", {}, {});
    const SafetensorsModel model = SafetensorsModel::open(dir.path());
    const auto config = dir.path() / "config.json";
    std::ofstream(config) << R"({"quantization": {"group_size": 64, "bits": 4}})";
    EXPECT_TRUE(is_mlx_source(model, config));

    std::filesystem::resize_file(config, (1ull << 20) + 1);  // sparse: nothing is written
    try {
        (void)is_mlx_source(model, config);
        ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input);
        EXPECT_EQ(std::string(e.what()),
                  config.string() +
                      ": is 1048577 bytes, over rebox's 1 MiB limit for this file (expected "
                      "the model's own config.json)");
    }
}

}  // namespace
}  // namespace rebox::verify_ref
