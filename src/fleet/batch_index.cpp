// Resolves the batch index (see batch_index.hpp).
#include "fleet/batch_index.hpp"

#include <charconv>

#include "format/printable.hpp"
#include "rebox/error.hpp"

namespace rebox::fleet {
namespace {

uint64_t parse_index(const std::string& text, const std::string& source) {
    uint64_t value = 0;
    const char* end = text.data() + text.size();
    const bool digits_only = !text.empty() && text.size() <= 19 &&
                             text.find_first_not_of("0123456789") == std::string::npos;
    const auto [ptr, error] = std::from_chars(text.data(), end, value);
    if (!digits_only || error != std::errc{} || ptr != end)
        throw Error(ExitClass::input, source, "",
                    "index '" + detail::printable(text, 40) + "' is not a line number",
                    "a non-negative decimal integer (0 is the first model line)");
    return value;
}

}  // namespace

BatchIndex resolve_batch_index(const std::optional<std::string>& flag, EnvLookup env) {
    if (flag) return {parse_index(*flag, "--index"), "--index"};
    for (const char* name : {"JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"}) {
        const char* value = env(name);
        if (value != nullptr && *value != '\0') return {parse_index(value, name), name};
    }
    throw Error(ExitClass::input,
                "batch: no index: none of --index, $JOB_COMPLETION_INDEX, $SLURM_ARRAY_TASK_ID "
                "is set (run it as an Indexed Job or a Slurm array task, or pass --index N)");
}

}  // namespace rebox::fleet
