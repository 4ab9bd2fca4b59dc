// All-or-nothing commit of several outputs (the shards of a split file, the rewritten shards of
// meta): every file is written and fsynced under its temporary name first, then each is renamed
// into place with the first output last; a file each one replaces is moved aside and only removed
// once the whole set is in place. A failure (or SIGINT/SIGTERM, through the cleanup registry)
// between two renames removes what was installed and puts the replaced files back, so the folder
// holds the old files or the complete new set, never a mix.
#pragma once

#include <memory>
#include <span>

#include "format/atomic_output.hpp"

namespace rebox {

// One output: AtomicOutput::commit(). Several: as above. Throws rebox::Error (input class) after
// the rollback.
void commit_all(std::span<const std::unique_ptr<AtomicOutput>> outputs);

}  // namespace rebox
