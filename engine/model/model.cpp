#include "model/model.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <set>

#include "model/gguf/gguf_model.h"
#include "model/hf_model.h"
#include "util/error.h"
#include "util/regular_file.h"

namespace kvscope {

std::int64_t WeightView::row_bytes() const {
  return kvscope::row_bytes(type, cols);
}

const void* WeightView::row(std::int64_t r) const {
  return static_cast<const std::uint8_t*>(data) + r * row_bytes();
}

void Model::for_each_weight(const std::function<void(const WeightView&)>& fn) const {
  // Tied embeddings make `output` alias `token_embd`: visit each stored tensor once.
  std::set<const void*> seen;
  auto visit = [&](const WeightView& w) {
    if (w && seen.insert(w.data).second) fn(w);
  };
  visit(weights_.token_embd);
  for (const auto& l : weights_.layers) {
    for (const WeightView* w :
         {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.bq, &l.bk, &l.bv, &l.q_norm, &l.k_norm, &l.wo,
          &l.post_attn_norm, &l.ffn_norm, &l.w_gate, &l.w_up, &l.w_down, &l.post_ffn_norm}) {
      visit(*w);
    }
  }
  visit(weights_.output_norm);
  visit(weights_.output);
}

std::uint64_t Model::weight_bytes(std::int64_t begin, std::int64_t end, bool embedding,
                                  bool output) const {
  std::set<const void*> seen;
  std::uint64_t total = 0;
  auto add = [&](const WeightView& w) {
    if (w && seen.insert(w.data).second) {
      total += static_cast<std::uint64_t>(w.rows) * static_cast<std::uint64_t>(w.row_bytes());
    }
  };
  if (embedding) add(weights_.token_embd);
  for (std::int64_t i = std::max<std::int64_t>(begin, 0);
       i < std::min<std::int64_t>(end, static_cast<std::int64_t>(weights_.layers.size())); ++i) {
    const LayerWeights& l = weights_.layers[static_cast<std::size_t>(i)];
    for (const WeightView* w :
         {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.bq, &l.bk, &l.bv, &l.q_norm, &l.k_norm, &l.wo,
          &l.post_attn_norm, &l.ffn_norm, &l.w_gate, &l.w_up, &l.w_down, &l.post_ffn_norm}) {
      add(*w);
    }
  }
  if (output) {
    add(weights_.output_norm);
    add(weights_.output);
  }
  return total;
}

std::uint64_t Model::weight_bytes() const {
  std::uint64_t total = 0;
  for_each_weight([&](const WeightView& w) {
    total += static_cast<std::uint64_t>(w.rows) * static_cast<std::uint64_t>(w.row_bytes());
  });
  return total;
}

namespace {

bool has_gguf_magic(const std::filesystem::path& path) {
  const RegularFile file(path.string());
  std::array<char, 4> magic{};
  if (file.read_at(0, magic.data(), magic.size()) != magic.size()) return false;
  return magic == std::array<char, 4>{'G', 'G', 'U', 'F'};
}

}  // namespace

std::unique_ptr<Model> load_model(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  const auto status = fs::status(p, ec);
  if (!fs::exists(status)) throw_error<ModelError>("{}: no such file or folder", path);
  if (fs::is_directory(status)) return std::make_unique<HfModel>(path);
  if (fs::is_regular_file(status)) {
    if (has_gguf_magic(p)) return std::make_unique<GgufModel>(path);
    // A path to the folder's config.json (or one of its weight files) names the folder.
    const auto name = p.filename().string();
    if (name == "config.json" || p.extension() == ".safetensors") {
      return std::make_unique<HfModel>(p.parent_path().empty() ? "." : p.parent_path().string());
    }
  }
  throw_error<ModelError>("{}: not a GGUF file or a Hugging Face folder", path);
}

}  // namespace kvscope
