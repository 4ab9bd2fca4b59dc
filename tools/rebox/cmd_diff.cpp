// rebox diff A B: what differs between two GGUF models (KVs, tensor set, tensor values), as text
// (only the differences and a summary line; --all: a line for every tensor) or one JSON object
// (every tensor). Exit 0 same, 1 different, 2 an input could not be read (like cmp(1)).
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "gguf_tool_commands.hpp"
#include "gguf_tools/gguf_diff.hpp"
#include "rebox/error.hpp"

namespace rebox::cli {
namespace {

struct DiffArgs {
    std::string a, b;
    bool json = false;
    bool all = false;  // a line for every tensor, identical ones included
};

const char* kv_kind_name(KvDifference::Kind kind) {
    switch (kind) {
        case KvDifference::Kind::added:
            return "added";
        case KvDifference::Kind::removed:
            return "removed";
        case KvDifference::Kind::changed:
            return "changed";
    }
    return "?";
}

std::string number(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.9g", v);
    return buf;
}

bool tensor_differs(const TensorComparison& t) {
    using V = TensorComparison::Verdict;
    return t.verdict != V::identical_bytes && t.verdict != V::same_values;
}

void print_text(const GgufDiff& diff, bool all) {
    for (const KvDifference& d : diff.kvs) {
        std::printf("kv %-8s %s", kv_kind_name(d.kind), d.key.c_str());
        if (d.kind == KvDifference::Kind::added) std::printf(" = %s", d.after.c_str());
        if (d.kind == KvDifference::Kind::removed) std::printf(" = %s", d.before.c_str());
        if (d.kind == KvDifference::Kind::changed)
            std::printf(": %s -> %s", d.before.c_str(), d.after.c_str());
        if (!d.detail.empty()) std::printf(" (%s)", d.detail.c_str());
        std::printf("\n");
    }
    size_t differing = 0;
    size_t same_values = 0;
    for (const TensorComparison& t : diff.tensors) {
        using V = TensorComparison::Verdict;
        differing += tensor_differs(t);
        same_values += t.verdict == V::same_values;
        if (!all && !tensor_differs(t)) continue;
        std::printf("tensor %s: %s", t.name.c_str(), verdict_name(t.verdict));
        switch (t.verdict) {
            case V::identical_bytes:
                break;
            case V::same_values:
                std::printf(" (%s -> %s, dequantized fp32 bit-equal)", t.type_a.c_str(),
                            t.type_b.c_str());
                break;
            case V::different:
                std::printf(
                    " (%s -> %s: %llu of %llu values differ, max abs error %s)", t.type_a.c_str(),
                    t.type_b.c_str(), static_cast<unsigned long long>(t.differing_values),
                    static_cast<unsigned long long>(t.elements), number(t.max_abs_error).c_str());
                break;
            case V::shape_differs:
                std::printf(" (%s -> %s)", t.shape_a.c_str(), t.shape_b.c_str());
                break;
            case V::not_compared:
                std::printf(" (%s -> %s: bytes differ, type not dequantized by rebox)",
                            t.type_a.c_str(), t.type_b.c_str());
                break;
            case V::only_in_a:
                std::printf(" (%s %s, only in A)", t.type_a.c_str(), t.shape_a.c_str());
                break;
            case V::only_in_b:
                std::printf(" (%s %s, only in B)", t.type_b.c_str(), t.shape_b.c_str());
                break;
        }
        std::printf("\n");
    }
    // The summary counts every tensor, also those not listed.
    const std::string in_another_type =
        same_values == 0
            ? ""
            : ", " + std::to_string(same_values) + " equal only as values (another type)";
    if (diff.same())
        std::printf("same: %zu tensors, KVs equal%s\n", diff.tensors.size(),
                    in_another_type.c_str());
    else
        std::printf("different: %zu KV difference(s), %zu of %zu tensors differ%s\n",
                    diff.kvs.size(), differing, diff.tensors.size(), in_another_type.c_str());
}

void print_json(const GgufDiff& diff) {
    nlohmann::json out;
    out["same"] = diff.same();
    out["kvs"] = nlohmann::json::array();
    for (const KvDifference& d : diff.kvs) {
        nlohmann::json j{{"key", d.key}, {"change", kv_kind_name(d.kind)}};
        if (d.kind != KvDifference::Kind::added) j["a"] = d.before;
        if (d.kind != KvDifference::Kind::removed) j["b"] = d.after;
        if (!d.detail.empty()) j["detail"] = d.detail;
        out["kvs"].push_back(j);
    }
    out["tensors"] = nlohmann::json::array();
    for (const TensorComparison& t : diff.tensors) {
        nlohmann::json j{{"name", t.name}, {"verdict", verdict_name(t.verdict)}};
        if (!t.type_a.empty()) j["type_a"] = t.type_a;
        if (!t.type_b.empty()) j["type_b"] = t.type_b;
        if (t.verdict == TensorComparison::Verdict::different) {
            j["differing_values"] = t.differing_values;
            j["elements"] = t.elements;
            j["max_abs_error"] = std::isfinite(t.max_abs_error) ? nlohmann::json(t.max_abs_error)
                                                                : nlohmann::json("inf");
        }
        out["tensors"].push_back(j);
    }
    std::printf("%s\n", out.dump(2).c_str());
}

int run_diff(const DiffArgs& args) {
    try {
        const GgufDiff diff = diff_gguf(args.a, args.b);
        if (args.json)
            print_json(diff);
        else
            print_text(diff, args.all);
        return diff.same() ? 0 : 1;
    } catch (const Error& e) {
        std::fprintf(stderr, "rebox: %s\n", e.what());
        return 2;
    }
}

}  // namespace

ToolCommand add_diff_command(CLI::App& app) {
    auto args = std::make_shared<DiffArgs>();
    CLI::App* cmd = app.add_subcommand("diff",
                                       "Compare two GGUF models: KVs, tensor set, tensor values "
                                       "(exit 0 same, 1 different, 2 error)");
    cmd->footer(
        "Compare two GGUF models (files or first shards of split sets): KVs added/removed/changed "
        "(split.* keys ignored), tensors added/removed, and per tensor: identical bytes; same "
        "values (dequantized fp32 bit-equal, e.g. Q4_1 vs its F32 twin); different (count, max abs "
        "error); not compared (types other than F32, F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0).\n"
        "Exit codes: 0 same (KVs equal, every tensor identical bytes or same values), 1 different, "
        "2 an input is unreadable or malformed.\n"
        "Text lists only what differs, then a summary line; --all lists every tensor. --json "
        "always "
        "lists every tensor.");
    cmd->add_option("A", args->a, "first GGUF")->required();
    cmd->add_option("B", args->b, "second GGUF")->required();
    cmd->add_flag("--json", args->json, "print one JSON object (every tensor)");
    cmd->add_flag("--all", args->all, "list every tensor, identical ones included");
    return {cmd, [args] { return run_diff(*args); }};
}

}  // namespace rebox::cli
