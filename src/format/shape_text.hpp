// The one text form of a tensor shape (or ne) in messages and listings: "[2048, 1024]", or the
// bare "2048, 1024" where a listing puts its own brackets or columns. (verify/ keeps its own, as
// it keeps its own of everything it checks the writer with.)
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

namespace rebox::detail {

// "2048, 1024"
inline std::string dims_text(std::span<const int64_t> dims) {
    std::string text;
    for (size_t i = 0; i < dims.size(); ++i) {
        if (i > 0) text += ", ";
        text += std::to_string(dims[i]);
    }
    return text;
}

// "[2048, 1024]"
inline std::string shape_text(std::span<const int64_t> dims) {
    std::string text = "[";
    text += dims_text(dims);
    text += ']';
    return text;
}

// shape_text({rows, n_groups}) for a shape spelled out in the message.
inline std::string shape_text(std::initializer_list<int64_t> dims) {
    return shape_text(std::span<const int64_t>(dims.begin(), dims.size()));
}

}  // namespace rebox::detail
