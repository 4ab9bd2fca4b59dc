// verify's KV checker: each expected {arch}.* / tokenizer.* key compared with the GGUF's value and
// type as llama.cpp reads it (docs/gguf.md §1.7), every key it saw marked handled so the caller can
// report the ones nobody derived. Used by metadata_checks.cpp and by the architectures' own KV
// hooks (RefArch::check_kvs, verify/arch/).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "format/gguf_shards.hpp"
#include "rebox/error.hpp"

namespace rebox::verify_ref {

class KvChecker {
  public:
    KvChecker(const GgufSet& gguf, std::vector<std::string>& problems)
        : gguf_(gguf), file_(gguf.shard(0).display_name()), problems_(problems) {}

    void problem(const std::string& key, const std::string& what,
                 const std::string& expected = "") {
        handled_.insert(key);
        problems_.push_back(error_message(file_, key, what, expected));
    }

    // The key's value was derived and compared (or its absence was expected).
    void handled(const std::string& key) { handled_.insert(key); }
    bool was_handled(const std::string& key) const { return handled_.count(key) != 0; }

    void expect_u32(const std::string& key, uint64_t expected) {
        handled(key);
        const GgufValue* value = gguf_.find(key);
        if (value == nullptr) return problem(key, "missing", "UINT32 " + std::to_string(expected));
        const auto got = value->as_u32();
        if (!got)
            return problem(key, "has type " + std::string(gguf_type_name(value->type)),
                           "UINT32 " + std::to_string(expected));
        if (*got != expected)
            problem(key, "is " + std::to_string(*got),
                    std::to_string(expected) + " from the source");
    }

    void expect_f32(const std::string& key, float expected) {
        handled(key);
        const GgufValue* value = gguf_.find(key);
        if (value == nullptr || value->type != GgufType::FLOAT32)
            return problem(key, "missing or not a FLOAT32", std::to_string(expected));
        if (static_cast<float>(std::get<double>(value->scalar)) != expected)
            problem(key, "is " + std::to_string(std::get<double>(value->scalar)),
                    std::to_string(expected) + " from config.json");
    }

    void expect_absent(const std::string& key, const std::string& why) {
        handled(key);
        if (gguf_.find(key) != nullptr) problem(key, "present", "absent: " + why);
    }

    void expect_string(const std::string& key, const std::string& expected) {
        handled(key);
        const GgufValue* value = gguf_.find(key);
        const std::string* got = value ? value->as_string() : nullptr;
        if (got == nullptr) return problem(key, "missing or not a STRING", "\"" + expected + "\"");
        if (*got != expected) problem(key, "is \"" + *got + "\"", "\"" + expected + "\"");
    }

    void expect_bool(const std::string& key, bool expected) {
        handled(key);
        const GgufValue* value = gguf_.find(key);
        const auto got = value ? value->as_bool() : std::nullopt;
        if (!got) return problem(key, "missing or not a BOOL", expected ? "true" : "false");
        if (*got != expected)
            problem(key, *got ? "is true" : "is false", expected ? "true" : "false");
    }

    // A UINT32 id, a BOOL or a STRING the source may or may not define; absent when it does not.
    template <typename T>
    void expect_optional(const std::string& key, const std::optional<T>& expected,
                         const std::string& why_absent) {
        if (!expected) return expect_absent(key, why_absent);
        if constexpr (std::is_same_v<T, std::string>)
            expect_string(key, *expected);
        else if constexpr (std::is_same_v<T, bool>)
            expect_bool(key, *expected);
        else
            expect_u32(key, *expected);
    }

    // A BOOL array KV must hold exactly `expected`.
    void expect_bools(const std::string& key, const std::vector<bool>& expected) {
        handled(key);
        const GgufValue* value = gguf_.find(key);
        std::string want;
        for (const bool b : expected) want += b ? '1' : '0';
        if (value == nullptr || !value->is_array() || value->elem_type != GgufType::BOOL)
            return problem(key, "missing or not a BOOL array", want + " (one per layer)");
        std::string got;
        for (const GgufScalar& item : value->array) {
            const bool* b = std::get_if<bool>(&item);
            got += b == nullptr ? '?' : *b ? '1' : '0';
        }
        if (got != want) problem(key, "is " + got, want + " from config.json");
    }

    // A STRING array KV must hold exactly `expected`.
    void expect_strings(const std::string& key, const std::vector<std::string>& expected,
                        const std::string& source) {
        handled(key);
        const GgufValue* value = gguf_.find(key);
        if (value == nullptr || !value->is_array() || value->elem_type != GgufType::STRING)
            return problem(key, "missing or not a STRING array",
                           std::to_string(expected.size()) + " entries from " + source);
        if (value->array.size() != expected.size())
            return problem(key, std::to_string(value->array.size()) + " entries",
                           std::to_string(expected.size()) + " from " + source);
        for (size_t i = 0; i < expected.size(); ++i) {
            const std::string* got = std::get_if<std::string>(&value->array[i]);
            if (got == nullptr || *got != expected[i])
                return problem(key, "entry " + std::to_string(i) + " differs",
                               "\"" + expected[i] + "\" from " + source);
        }
    }

    const GgufSet& gguf_;
    std::string file_;  // first shard: where the KVs live
    std::vector<std::string>& problems_;
    std::set<std::string> handled_;
};

// An INT32 / FLOAT32 / UINT8 array KV must hold exactly `expected` (token types, SentencePiece
// scores, a Unigram charsmap).
template <typename T>
void check_numbers(KvChecker& kv, const std::string& key, GgufType elem_type,
                   const std::vector<T>& expected) {
    kv.handled(key);
    const GgufValue* value = kv.gguf_.find(key);
    if (value == nullptr || !value->is_array() || value->elem_type != elem_type)
        return kv.problem(key,
                          "missing or not a " + std::string(gguf_type_name(elem_type)) + " array");
    if (value->array.size() != expected.size())
        return kv.problem(key, std::to_string(value->array.size()) + " entries",
                          std::to_string(expected.size()) + " (one per token)");
    for (size_t i = 0; i < expected.size(); ++i) {
        bool same = false;
        if constexpr (std::is_floating_point_v<T>) {
            const double* got = std::get_if<double>(&value->array[i]);
            same = got != nullptr && *got == static_cast<double>(expected[i]);
        } else {
            const int64_t* got = std::get_if<int64_t>(&value->array[i]);
            const uint64_t* got_unsigned = std::get_if<uint64_t>(&value->array[i]);
            same = (got != nullptr && *got == static_cast<int64_t>(expected[i])) ||
                   (got_unsigned != nullptr && *got_unsigned == static_cast<uint64_t>(expected[i]));
        }
        if (!same)
            return kv.problem(key, "entry " + std::to_string(i) + " differs",
                              std::to_string(expected[i]) + " from the source tokenizer");
    }
}

}  // namespace rebox::verify_ref
