// Where other tools keep the models they downloaded, so KVScope can list them without a
// second copy. Each place is a folder and the layout its tool writes there:
//
//   Hugging Face  $HF_HUB_CACHE, $HF_HOME/hub, ~/.cache/huggingface/hub
//                 models--ORG--NAME/snapshots/REV/{config.json, *.safetensors, *.gguf}
//   Ollama        $OLLAMA_MODELS, ~/.ollama/models
//                 manifests/HOST/NAMESPACE/NAME/TAG (JSON naming layers), blobs/sha256-HEX
//   LM Studio     ~/.lmstudio/models, ~/.cache/lm-studio/models: PUBLISHER/REPO/FILE.gguf
//   GPT4All       ~/.local/share/nomic.ai/GPT4All/FILE.gguf
//   llama.cpp     $LLAMA_CACHE, ~/.cache/llama.cpp/FILE.gguf
//   Jan           ~/jan/models, ~/.local/share/Jan/data/models and (0.6+)
//                 ~/.local/share/Jan/data/llamacpp/models: MODEL-ID/FILE.gguf
//   KVScope       ~/.cache/kvscope/models (packaging/get-model.sh)
//   added folder  any folder the user names: GGUF files and HF folders inside it
//
// Nothing here reads the disk: the home folder and the environment are parameters, so a
// test can point every place into a fake home.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvscope {

enum class PlaceLayout {
  Files,   // GGUF files and HF folders anywhere below the root (bounded depth)
  HfHub,   // the Hugging Face hub cache
  Ollama,  // Ollama's manifests and blobs
};

struct ModelPlace {
  std::string source;  // the tool, shown to the user: "Ollama"
  std::filesystem::path root;
  PlaceLayout layout = PlaceLayout::Files;
};

// A variable's value, nullopt when unset or empty.
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

// The process environment, for callers that scan the real computer.
EnvLookup process_env();

// Where KVScope keeps downloaded models, as packaging/get-model.sh chooses it:
// $KVSCOPE_MODELS_DIR, else $XDG_CACHE_HOME/kvscope/models, else HOME/.cache/kvscope/models.
// kvscope-cli pull and the Models page download there, and model_places() scans it.
std::filesystem::path kvscope_models_dir(const std::filesystem::path& home, const EnvLookup& env);

// Every place under `home` (and those the environment names), then `extra` folders as
// "added folder". Places that do not exist are listed too; the scan skips them.
std::vector<ModelPlace> model_places(const std::filesystem::path& home, const EnvLookup& env,
                                     const std::vector<std::filesystem::path>& extra = {});

}  // namespace kvscope
