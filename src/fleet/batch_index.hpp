// Which manifest line a batch run converts: --index, else $JOB_COMPLETION_INDEX (Kubernetes
// Indexed Job), else $SLURM_ARRAY_TASK_ID (Slurm array); a set but malformed value is an error,
// never a fallback to the next source.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rebox::fleet {

// Exit code of `rebox batch` when the index names no line of the manifest (past the end).
inline constexpr int kExitNoSuchLine = 4;

struct BatchIndex {
    uint64_t value = 0;
    std::string source;  // "--index", "JOB_COMPLETION_INDEX" or "SLURM_ARRAY_TASK_ID"
};

// Environment lookup (std::getenv in the CLI; a map in tests).
using EnvLookup = const char* (*)(const char* name);

// The index from the flag or the environment; throws rebox::Error (input) when none is set or
// the one that is set is not a non-negative decimal integer. An empty variable counts as unset.
BatchIndex resolve_batch_index(const std::optional<std::string>& flag, EnvLookup env);

}  // namespace rebox::fleet
