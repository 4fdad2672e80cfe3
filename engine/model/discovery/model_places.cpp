#include "model/discovery/model_places.h"

#include <cstdlib>
#include <string>

namespace kvscope {

namespace {

namespace fs = std::filesystem;

// $NAME when set, else `fallback`.
fs::path env_or(const EnvLookup& env, std::string_view name, const fs::path& fallback) {
  const auto value = env(name);
  return value ? fs::path(*value) : fallback;
}

fs::path hf_hub_cache(const fs::path& home, const EnvLookup& env) {
  if (const auto hub = env("HF_HUB_CACHE")) return *hub;
  return env_or(env, "HF_HOME", home / ".cache" / "huggingface") / "hub";
}

}  // namespace

EnvLookup process_env() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
  };
}

fs::path kvscope_models_dir(const fs::path& home, const EnvLookup& env) {
  if (const auto dir = env("KVSCOPE_MODELS_DIR")) return *dir;
  return env_or(env, "XDG_CACHE_HOME", home / ".cache") / "kvscope" / "models";
}

std::vector<ModelPlace> model_places(const fs::path& home, const EnvLookup& env,
                                     const std::vector<fs::path>& extra) {
  const fs::path share = home / ".local" / "share";
  std::vector<ModelPlace> places = {
      {"Hugging Face", hf_hub_cache(home, env), PlaceLayout::HfHub},
      {"Ollama", env_or(env, "OLLAMA_MODELS", home / ".ollama" / "models"), PlaceLayout::Ollama},
      {"LM Studio", home / ".lmstudio" / "models", PlaceLayout::Files},
      {"LM Studio", home / ".cache" / "lm-studio" / "models", PlaceLayout::Files},
      {"GPT4All", share / "nomic.ai" / "GPT4All", PlaceLayout::Files},
      {"llama.cpp", env_or(env, "LLAMA_CACHE", home / ".cache" / "llama.cpp"), PlaceLayout::Files},
      {"Jan", home / "jan" / "models", PlaceLayout::Files},
      {"Jan", share / "Jan" / "data" / "models", PlaceLayout::Files},
      {"Jan", share / "Jan" / "data" / "llamacpp" / "models", PlaceLayout::Files},
      {"KVScope", kvscope_models_dir(home, env), PlaceLayout::Files},
  };
  for (const fs::path& folder : extra)
    places.push_back({"added folder", folder, PlaceLayout::Files});
  return places;
}

}  // namespace kvscope
