// Ollama's store: a model is a manifest at manifests/HOST/NAMESPACE/NAME/TAG, a JSON
// document in the OCI image-manifest shape naming its layers by digest:
//   {"layers": [{"mediaType": "application/vnd.ollama.image.model",
//                "digest": "sha256:<64 hex>", "size": N}, ...template, params, license]}
// The model layer is a GGUF file at blobs/sha256-<64 hex>. Its name as `ollama list`
// shows it: "NAME:TAG" for registry.ollama.ai/library, "NAMESPACE/NAME:TAG" for other
// namespaces there, "HOST/NAMESPACE/NAME:TAG" for other hosts (hf.co/ORG/REPO:TAG).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace kvscope {

struct OllamaManifest {
  std::string name;  // "llama3.2:1b"
  std::filesystem::path manifest;
  std::filesystem::path blob;  // the GGUF layer; empty when `error` says why
  std::string error;
};

// Every manifest under root/manifests (exactly HOST/NAMESPACE/NAME/TAG deep), sorted by
// path, each resolved to its model blob. A manifest that is not JSON, has no model layer,
// a malformed digest or a missing blob comes back with `error` set.
std::vector<OllamaManifest> ollama_manifests(const std::filesystem::path& root);

// The blob of the model layer of the manifest at `manifest`; ModelError naming the file.
std::filesystem::path ollama_model_blob(const std::filesystem::path& root,
                                        const std::filesystem::path& manifest);

}  // namespace kvscope
