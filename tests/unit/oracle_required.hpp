// What a test does when its outside oracle (llama.cpp's libggml-base.so or a tokenizer from the npm
// test clients) is not installed: in CI (the environment sets CI=true) it fails with one line
// naming what is missing, since a skipped oracle would let a broken build pass; on a developer's
// machine without the npm tree it is skipped with the same line.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace rebox::test {

inline bool in_ci() {
    const char* ci = std::getenv("CI");
    return ci != nullptr && std::string_view(ci) == "true";
}

}  // namespace rebox::test

// Use inside a TEST body (it returns from it): `why` names the missing file and how to install it.
#define REBOX_ORACLE_MISSING(why)                                                    \
    do {                                                                             \
        if (::rebox::test::in_ci()) FAIL() << "oracle missing (CI=true): " << (why); \
        GTEST_SKIP() << "oracle missing: " << (why);                                 \
    } while (0)
