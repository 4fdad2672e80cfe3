// "Models on this computer": every GGUF file and Hugging Face folder in the places other
// tools keep them (model_places.h), each described from its headers (local_model.h).
//
// The walk is bounded so that an added folder like ~ costs little: at most max_depth
// folders below a root, folders whose names start with '.' skipped below a root, at most
// max_entries directory entries in all, every folder visited once (by its canonical path,
// so a symlink loop or a folder reachable from two places is read once). A folder holding
// config.json and .safetensors files is one model and is not walked further. The files of
// a split GGUF are one entry. Broken files are entries with their error.
#pragma once

#include <cstddef>
#include <vector>

#include "model/discovery/local_model.h"
#include "model/discovery/model_places.h"

namespace kvscope {

struct ScanLimits {
  int max_depth = 4;                 // folders below a place's root (LM Studio needs 2)
  std::size_t max_entries = 100000;  // directory entries read over the whole scan
};

// The models in `places`, place by place, in walk order (each folder's files sorted by
// name before its subfolders; Ollama by manifest path). Places that do not
// exist contribute nothing. Never throws for what it finds on disk.
std::vector<LocalModel> scan_local_models(const std::vector<ModelPlace>& places,
                                          const ScanLimits& limits = {});

}  // namespace kvscope
