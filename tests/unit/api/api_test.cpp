// The public API (rebox/rebox.hpp) beyond the consumer test: cancellation through the progress
// callback leaves nothing behind, Error's structured fields compose the documented message, and
// split/merge through their options structs (dry run included).
#include <gtest/gtest.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "rebox/rebox.hpp"
#include "test_files.hpp"
#include "test_paths.hpp"
#include "test_process.hpp"

namespace rebox {
namespace {

namespace fs = std::filesystem;

class Api : public ::testing::Test {
  protected:
    void SetUp() override {
        work_ = scratch_.path();
        model_ = work_ / "tiny";
        ASSERT_EQ(test::run_mkfixture(model_, "--preset tiny"), 0);
    }
    // Every file left in the work folder except the model's.
    std::vector<std::string> files_outside_model() const {
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(work_))
            if (entry.path() != model_) names.push_back(entry.path().filename().string());
        return names;
    }
    test::ScratchDir scratch_;
    fs::path work_, model_;
};

TEST_F(Api, ConvertCancelledByTheCallbackLeavesNoFile) {
    ConvertOptions options;
    options.model_dir = model_;
    options.output = work_ / "out.gguf";
    int calls = 0;
    options.progress = [&](const Progress& p) {
        EXPECT_EQ(p.stage, "convert");
        ++calls;
        return false;
    };
    try {
        convert_model(options);
        ADD_FAILURE() << "convert_model returned although the callback cancelled";
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::cancelled);
        EXPECT_EQ(e.exit_code(), 130);
    }
    EXPECT_EQ(calls, 1);  // the first false stops it
    EXPECT_TRUE(files_outside_model().empty()) << files_outside_model().front();
}

TEST_F(Api, VerifyCancelledByTheCallback) {
    ConvertOptions options;
    options.model_dir = model_;
    options.output = work_ / "out.gguf";
    ASSERT_TRUE(convert_model(options).written);
    VerifyOptions verify;
    verify.progress = [](const Progress& p) { return p.stage != "verify"; };
    try {
        verify_gguf(model_, options.output, verify);
        ADD_FAILURE() << "verify_gguf returned although the callback cancelled";
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::cancelled);
    }
    verify.progress = [](const Progress&) { return true; };
    EXPECT_TRUE(verify_gguf(model_, options.output, verify).ok());
}

// A callback that throws (from the ticker thread, or on the last call at the end) fails the call
// with an Error of class cancelled naming the callback and its message; no temporary file stays.
TEST_F(Api, ConvertCallbackThatThrowsBecomesACancelledError) {
    for (const bool at_the_end : {false, true}) {
        ConvertOptions options;
        options.model_dir = model_;
        options.output = work_ / "out.gguf";
        options.progress = [&](const Progress& p) -> bool {
            if (!at_the_end || p.done == p.total) throw std::runtime_error("callback boom");
            return true;
        };
        try {
            convert_model(options);
            ADD_FAILURE() << "convert_model returned although the callback threw";
        } catch (const Error& e) {
            EXPECT_EQ(e.exit_class(), ExitClass::cancelled) << e.what();
            EXPECT_EQ(e.field(), "progress callback");
            EXPECT_NE(std::string(e.what()).find("callback boom"), std::string::npos) << e.what();
        }
        EXPECT_TRUE(files_outside_model().empty()) << files_outside_model().front();
    }
}

TEST_F(Api, VerifyCallbackThatThrowsBecomesACancelledError) {
    ConvertOptions options;
    options.model_dir = model_;
    options.output = work_ / "out.gguf";
    ASSERT_TRUE(convert_model(options).written);
    for (const bool at_the_end : {false, true}) {
        VerifyOptions verify;
        verify.progress = [&](const Progress& p) -> bool {
            if (!at_the_end || p.done == p.total) throw 42;  // not even a std::exception
            return true;
        };
        try {
            verify_gguf(model_, options.output, verify);
            ADD_FAILURE() << "verify_gguf returned although the callback threw";
        } catch (const Error& e) {
            EXPECT_EQ(e.exit_class(), ExitClass::cancelled) << e.what();
            EXPECT_EQ(e.field(), "progress callback");
        }
    }
}

TEST_F(Api, ErrorFieldsComposeTheDocumentedMessage) {
    const fs::path bad = work_ / "bad.gguf";
    test::write_file(bad, std::vector<uint8_t>{'G', 'G', 'U', 'X', 3, 0, 0, 0});
    try {
        inspect_gguf(bad);
        ADD_FAILURE() << "inspect_gguf accepted a file with a wrong magic";
    } catch (const Error& e) {
        EXPECT_EQ(e.exit_class(), ExitClass::input);
        EXPECT_EQ(e.file(), bad.string());
        EXPECT_FALSE(e.problem().empty());
        std::string composed = e.file() + ": ";
        if (!e.field().empty()) composed += e.field() + ": ";
        composed += e.problem();
        if (!e.expected().empty()) composed += " (expected " + e.expected() + ")";
        EXPECT_EQ(e.what(), composed);
        EXPECT_TRUE(e.blockers().empty());
    }
}

TEST_F(Api, PlanReportsTheSourceOfEveryTensor) {
    const PlanReport plan = plan_model(model_);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan.format, "mcq-v1");
    EXPECT_EQ(plan.arch, "qwen3");
    const SafetensorsInfo source = inspect_safetensors(model_ / "model.safetensors");
    for (const PlannedTensor& t : plan.tensors) {
        if (t.source_name.empty()) continue;  // computed from config.json
        bool found = false;
        for (const SafetensorsTensorInfo& s : source.tensors)
            found = found || s.name == t.source_name || s.name == t.source_name + ".qcodes";
        EXPECT_TRUE(found) << t.gguf_name << " <- " << t.source_name;
        if (t.bits > 0) {
            EXPECT_TRUE(t.bits == 3 || t.bits == 4) << t.gguf_name;  // the tiny preset: 3/4-bit
            EXPECT_TRUE(t.type == GgmlType::Q4_1) << ggml_type_name(t.type);
        }
    }
}

TEST_F(Api, SplitDryRunCreatesNothingAndMergeRestoresTheTensors) {
    ConvertOptions options;
    options.model_dir = model_;
    options.output = work_ / "out.gguf";
    ASSERT_TRUE(convert_model(options).written);
    const GgufInfo whole = inspect_gguf(options.output);

    SplitOptions split;
    split.limits.max_tensors = 8;
    split.dry_run = true;
    const std::vector<PlannedOutput> planned =
        split_gguf(options.output, (work_ / "part").string(), split);
    ASSERT_GT(planned.size(), 1u);
    for (const PlannedOutput& p : planned) EXPECT_FALSE(fs::exists(p.path)) << p.path;

    split.dry_run = false;
    const std::vector<PlannedOutput> written =
        split_gguf(options.output, (work_ / "part").string(), split);
    ASSERT_EQ(written.size(), planned.size());
    size_t tensors = 0;
    for (const PlannedOutput& p : written) {
        EXPECT_EQ(fs::file_size(p.path), p.bytes) << p.path;
        tensors += p.tensors;
    }
    EXPECT_EQ(tensors, whole.tensors.size());
    const GgufInfo set = inspect_gguf(written.front().path);
    EXPECT_EQ(set.files.size(), written.size());
    EXPECT_EQ(set.kvs, whole.kvs);

    const PlannedOutput merged = merge_gguf(written.front().path, work_ / "merged.gguf");
    const GgufInfo back = inspect_gguf(work_ / "merged.gguf");
    EXPECT_EQ(fs::file_size(work_ / "merged.gguf"), merged.bytes);
    EXPECT_EQ(back.kvs, whole.kvs);
    ASSERT_EQ(back.tensors.size(), whole.tensors.size());
    for (size_t i = 0; i < back.tensors.size(); ++i)
        EXPECT_EQ(back.tensors[i].info, whole.tensors[i].info) << i;
    // Without force the existing output is refused.
    EXPECT_THROW(merge_gguf(written.front().path, work_ / "merged.gguf"), Error);
}

}  // namespace
}  // namespace rebox
