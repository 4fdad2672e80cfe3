// `kvscope-cli inspect MODEL [--json]`: what a model file is, before running it: its spec,
// tensor types and bytes, tokenizer, chat template, and what each KV dtype costs per token.
#include <map>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/arg_parser.h"
#include "cli/command.h"
#include "kv/format/kv_format.h"
#include "model/model.h"
#include "plan/kv_footprint.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"
#include "util/error.h"
#include "util/utf8.h"

namespace kvscope::cli {

namespace {

nlohmann::json spec_json(const ModelSpec& s) {
  return {{"architecture", s.architecture},
          {"name", s.name},
          {"n_layers", s.n_layers},
          {"dim", s.dim},
          {"n_heads", s.n_heads},
          {"n_kv_heads", s.n_kv_heads},
          {"head_dim", s.head_dim},
          {"ffn_dim", s.ffn_dim},
          {"vocab_size", s.vocab_size},
          {"context_length", s.context_length},
          {"rope_theta", s.rope_theta},
          {"rope_scaling", rope_scaling_name(s.rope_scaling.type)},
          {"rope_scaling_factor", s.rope_scaling.factor},
          {"rope_pairing", s.rope_pairing == RopePairing::Adjacent ? "adjacent" : "half-split"},
          {"norm_eps", s.norm_eps},
          {"sliding_window", s.sliding_window},
          {"tied_embeddings", s.tied_embeddings},
          {"qkv_bias", s.qkv_bias}};
}

// {type name: {"tensors": n, "bytes": b}} over every stored weight, each counted once.
nlohmann::json tensor_summary(const Model& model) {
  std::map<std::string, std::pair<std::int64_t, std::uint64_t>> by_type;
  model.for_each_weight([&](const WeightView& w) {
    auto& [n, bytes] = by_type[std::string(tensor_type_name(w.type))];
    ++n;
    bytes += static_cast<std::uint64_t>(w.rows) * static_cast<std::uint64_t>(w.row_bytes());
  });
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [type, nb] : by_type) out[type] = {{"tensors", nb.first}, {"bytes", nb.second}};
  return out;
}

// Per K/V dtype, in blocks of the default size: a block's bytes (what the allocator takes),
// the per-token figures derived from it (fractional when a block's Int4 K offsets do not
// divide among its slots) and the whole blocks one sequence of the full context holds in the
// engine's layer groups (kv_footprint: a sliding-window group at its window), beside what
// every layer holding every token would take.
nlohmann::json kv_json(const ModelSpec& s) {
  constexpr std::int64_t bs = kDefaultKvBlockSize;
  nlohmann::json out = nlohmann::json::object();
  for (KvDtype d : {KvDtype::F16, KvDtype::Int8, KvDtype::Int4}) {
    const std::int64_t per_block = kv_bytes_per_block_per_layer(d, d, s.n_kv_heads, s.head_dim, bs);
    const double per_token = kv_bytes_per_token_per_layer(d, s.n_kv_heads, s.head_dim, bs);
    const KvCacheConfig config = default_kv_config(s, d, d, bs);
    out[std::string(kv_dtype_name(d))] = {
        {"block_size", bs},
        {"bytes_per_block_per_layer", per_block},
        {"bytes_per_token_per_layer", per_token},
        {"bytes_per_token", per_token * static_cast<double>(s.n_layers)},
        {"bytes_full_context", kv_footprint(config, 1, s.context_length, 1).held_bytes},
        {"bytes_full_context_without_windows",
         (s.context_length + bs - 1) / bs * per_block * s.n_layers}};
  }
  return out;
}

nlohmann::json inspect_json(const Model& model, const Tokenizer& tok) {
  const TemplateFamily family = detect_template(model.chat_template());
  return {{"path", model.path()},
          {"format", model.format() == ModelFormat::Gguf ? "gguf" : "huggingface"},
          {"spec", spec_json(model.spec())},
          {"weight_bytes", model.weight_bytes()},
          {"tensors", tensor_summary(model)},
          {"tokenizer",
           {{"kind", tok.kind()},
            {"vocab_size", tok.vocab_size()},
            {"bos", tok.bos()},
            {"eos", tok.eos()},
            {"eot", tok.eot()},
            {"add_bos", tok.add_bos_default()}}},
          {"chat_template", template_family_name(family)},
          {"kv_cache", kv_json(model.spec())}};
}

double mib(std::uint64_t b) {
  return static_cast<double>(b) / (1024.0 * 1024.0);
}

void print_text(const nlohmann::json& j) {
  const auto& s = j["spec"];
  fmt::print("{} ({})\n", j["path"].get<std::string>(), j["format"].get<std::string>());
  // general.name is the file's text: shown without its control bytes, at most 256 bytes
  fmt::print("  architecture  {}  \"{}\"\n", s["architecture"].get<std::string>(),
             printable_prefix(s["name"].get<std::string>(), 256));
  fmt::print("  layers {}  dim {}  heads {}  kv heads {}  head dim {}  ffn {}  vocab {}\n",
             s["n_layers"].get<int64_t>(), s["dim"].get<int64_t>(), s["n_heads"].get<int64_t>(),
             s["n_kv_heads"].get<int64_t>(), s["head_dim"].get<int64_t>(),
             s["ffn_dim"].get<int64_t>(), s["vocab_size"].get<int64_t>());
  fmt::print(
      "  context {}  rope theta {}  scaling {}  pairing {}  norm eps {}  window {}  tied {}\n",
      s["context_length"].get<int64_t>(), s["rope_theta"].get<double>(),
      s["rope_scaling"].get<std::string>(), s["rope_pairing"].get<std::string>(),
      s["norm_eps"].get<double>(), s["sliding_window"].get<int64_t>(),
      s["tied_embeddings"].get<bool>() ? "yes" : "no");
  fmt::print("tensors ({:.2f} MiB, {} bytes)\n", mib(j["weight_bytes"].get<std::uint64_t>()),
             j["weight_bytes"].get<std::uint64_t>());
  for (const auto& [type, v] : j["tensors"].items()) {
    fmt::print("  {:<6} {:>5} tensors {:>12.2f} MiB\n", type, v["tensors"].get<int64_t>(),
               mib(v["bytes"].get<std::uint64_t>()));
  }
  const auto& t = j["tokenizer"];
  fmt::print("tokenizer  {}, vocab {}, bos {}, eos {}, eot {}\n", t["kind"].get<std::string>(),
             t["vocab_size"].get<int64_t>(), t["bos"].get<int>(), t["eos"].get<int>(),
             t["eot"].get<int>());
  fmt::print("chat template  {}\n", j["chat_template"].get<std::string>());
  fmt::print(
      "KV cache per token (all {} layers; K+V incl. scales and int4 K offsets, blocks of "
      "{}):\n",
      s["n_layers"].get<int64_t>(), kDefaultKvBlockSize);
  for (const auto& [dtype, v] : j["kv_cache"].items()) {
    const auto held = v["bytes_full_context"].get<std::uint64_t>();
    const auto full = v["bytes_full_context_without_windows"].get<std::uint64_t>();
    fmt::print("  {:<5} {:>10.2f} bytes/token   {:>10.2f} MiB at the full context", dtype,
               v["bytes_per_token"].get<double>(), mib(held));
    if (held != full) fmt::print(" ({:.2f} MiB if no layer slid)", mib(full));
    fmt::print("\n");
  }
}

}  // namespace

int cmd_inspect(const Args& args) {
  ArgParser p("inspect", "MODEL [--json]");
  p.flag({"--json"}, "print one JSON object");
  if (!p.parse(args)) return 0;
  if (p.positional().size() != 1) throw_error<UsageError>("expected one MODEL path (see --help)");
  const auto model = load_model(p.positional()[0]);
  const auto tokenizer = make_tokenizer(*model);
  const nlohmann::json j = inspect_json(*model, *tokenizer);
  if (p.has("--json")) {
    fmt::print("{}\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    print_text(j);
  }
  return 0;
}

}  // namespace kvscope::cli
