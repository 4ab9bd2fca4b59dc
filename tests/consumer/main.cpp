// A program that uses the installed library through <rebox/rebox.hpp> only: plans, converts,
// verifies and inspects a checkpoint with progress through its own callback, and checks what the
// calls return against each other and against the files they wrote.
// Usage: consumer GOOD_MODEL_DIR REFUSED_MODEL_DIR WORK_DIR
#include <cstdio>
#include <filesystem>
#include <rebox/rebox.hpp>
#include <string>
#include <vector>

namespace {

int failures = 0;

void check(bool ok, const std::string& what) {
    if (!ok) {
        std::fprintf(stderr, "consumer: FAILED: %s\n", what.c_str());
        ++failures;
    }
}

struct Seen {
    std::vector<std::string> stages;
    bool last_complete = false;  // the last call had done == total
    bool monotonic = true;
    uint64_t last_done = 0;
};

rebox::ProgressCallback recorder(Seen& seen) {
    return [&seen](const rebox::Progress& p) {
        if (seen.stages.empty() || seen.stages.back() != p.stage) {
            seen.stages.emplace_back(p.stage);
            seen.last_done = 0;
        }
        if (p.done < seen.last_done || p.done > p.total) seen.monotonic = false;
        seen.last_done = p.done;
        seen.last_complete = p.done == p.total;
        return true;
    };
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: consumer GOOD_MODEL_DIR REFUSED_MODEL_DIR WORK_DIR\n");
        return 2;
    }
    const std::filesystem::path good = argv[1], refused = argv[2], work = argv[3];
    std::filesystem::create_directories(work);

    // plan: every tensor has a known type and a size; the file size is known before writing.
    const rebox::PlanReport plan = rebox::plan_model(good);
    check(plan.ok(), "the tiny checkpoint plans without BLOCKERs");
    check(!plan.tensors.empty() && plan.file_bytes > 0, "the plan has tensors and a file size");
    for (const rebox::PlannedTensor& t : plan.tensors)
        check(rebox::ggml_type_traits(t.type).has_value(), t.gguf_name + ": a known ggml type");

    // convert, with progress
    Seen convert_seen;
    rebox::ConvertOptions options;
    options.model_dir = good;
    options.output = work / "tiny.gguf";
    options.progress = recorder(convert_seen);
    const rebox::ConvertReport converted = rebox::convert_model(options);
    check(converted.written, "convert wrote the file");
    check(converted.verify && converted.verify->ok(), "convert's verification passed");
    check(convert_seen.stages == std::vector<std::string>{"convert"} &&
              convert_seen.last_complete && convert_seen.monotonic,
          "convert reported progress, monotonic, ending at done == total");
    check(std::filesystem::file_size(options.output) == plan.file_bytes &&
              converted.output_bytes == plan.file_bytes,
          "the file has the size the plan announced");

    // inspect: the reader sees what the plan said, in order.
    const rebox::GgufInfo info = rebox::inspect_gguf(options.output);
    check(info.files.size() == 1 && info.bytes == plan.file_bytes, "inspect: one file, its size");
    check(info.tensors.size() == plan.tensors.size(), "inspect: the planned tensor count");
    for (size_t i = 0; i < info.tensors.size() && i < plan.tensors.size(); ++i) {
        const rebox::GgufTensorInfo& t = info.tensors[i].info;
        check(t.name == plan.tensors[i].gguf_name && t.type == plan.tensors[i].type &&
                  t.ne == plan.tensors[i].ne && t.nbytes == plan.tensors[i].nbytes,
              "inspect: tensor " + std::to_string(i) + " as planned");
    }
    check(info.kvs == plan.kvs, "inspect: the planned KVs, in order");
    const rebox::SafetensorsInfo st = rebox::inspect_safetensors(good / "model.safetensors");
    check(!st.tensors.empty() && st.header_bytes > 0, "inspect_safetensors: a header with tensors");

    // verify on its own, with progress
    Seen verify_seen;
    rebox::VerifyOptions verify_options;
    verify_options.progress = recorder(verify_seen);
    const rebox::VerifyReport verified = rebox::verify_gguf(good, options.output, verify_options);
    check(verified.ok() && verified.re_encoded_total > 0 &&
              verified.re_encoded_identical == verified.re_encoded_total,
          "verify: every re-encoded tensor bit-identical: " + verified.summary());
    check(verify_seen.stages == std::vector<std::string>{"verify"} && verify_seen.last_complete,
          "verify reported progress ending at done == total");

    // BLOCKERs as data: plan lists them, convert throws them and writes nothing.
    const rebox::PlanReport refused_plan = rebox::plan_model(refused);
    check(!refused_plan.ok() && refused_plan.file_bytes == 0, "the group-16 checkpoint is refused");
    try {
        rebox::ConvertOptions refused_options;
        refused_options.model_dir = refused;
        refused_options.output = work / "refused.gguf";
        rebox::convert_model(refused_options);
        check(false, "convert of the refused checkpoint throws");
    } catch (const rebox::Error& e) {
        check(e.exit_class() == rebox::ExitClass::blocker, "a blocker-class Error");
        check(e.blockers().size() == refused_plan.blockers.size(),
              "the Error carries the plan's BLOCKERs");
        for (size_t i = 0; i < e.blockers().size() && i < refused_plan.blockers.size(); ++i)
            check(e.blockers()[i].tensor == refused_plan.blockers[i].tensor, "the same tensors");
        check(!std::filesystem::exists(work / "refused.gguf"), "nothing written");
    }
    std::printf(failures ? "consumer: %d check(s) failed\n" : "consumer: api ok\n", failures);
    return failures ? 1 : 0;
}
