// GET /v1/kvscope/snapshot: the live panel's CacheSnapshot (kv/cache_snapshot.h) as JSON, so
// a script or another tool sees what the panel sees. Field names are the struct's. Each
// group's block map ([n_blocks] of [owner, refcount, filled_slots], owner -1 = free) is
// included only when asked: it is the one part that grows with the pool.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "kv/cache_snapshot.h"

namespace kvscope::serve {

nlohmann::json snapshot_json(const CacheSnapshot& snapshot, bool with_blocks);

}  // namespace kvscope::serve
