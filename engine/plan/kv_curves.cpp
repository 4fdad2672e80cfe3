#include "plan/kv_curves.h"

#include <array>

#include "plan/kv_footprint.h"

namespace kvscope {

std::string_view attention_layout_name(AttentionLayout layout) {
  switch (layout) {
    case AttentionLayout::Mha:
      return "MHA";
    case AttentionLayout::Gqa:
      return "GQA";
    case AttentionLayout::Mqa:
      return "MQA";
  }
  return "?";
}

std::int64_t layout_kv_heads(const ModelSpec& spec, AttentionLayout layout) {
  switch (layout) {
    case AttentionLayout::Mha:
      return spec.n_heads;
    case AttentionLayout::Mqa:
      return 1;
    case AttentionLayout::Gqa:
      break;
  }
  if (spec.n_kv_heads > 1 && spec.n_kv_heads < spec.n_heads) return spec.n_kv_heads;
  for (std::int64_t heads = 8; heads > 1; --heads) {
    if (heads < spec.n_heads && spec.n_heads % heads == 0) return heads;
  }
  return 0;
}

KvCacheConfig kv_variant(const PlanRequest& request, std::int64_t n_kv_heads, KvDtype k_dtype,
                         KvDtype v_dtype) {
  // the window pools as the engine sizes them, so the model's curve ends at the plan's KV
  KvCacheConfig config = with_window_pools(request.kv, request.batch, request.prefill_chunk);
  config.n_kv_heads = n_kv_heads;
  for (LayerGroupConfig& g : config.groups) {
    g.k_dtype = k_dtype;
    g.v_dtype = v_dtype;
  }
  return config;
}

std::vector<std::int64_t> kv_curve_contexts(std::int64_t max_context, int n_points) {
  std::vector<std::int64_t> xs;
  xs.reserve(static_cast<std::size_t>(n_points) + 1);
  for (int i = 0; i <= n_points; ++i) xs.push_back(max_context * i / n_points);
  return xs;
}

namespace {

KvCurve sample(const PlanRequest& request, const std::vector<std::int64_t>& xs, KvCurve curve) {
  const KvCacheConfig config = kv_variant(request, curve.n_kv_heads, curve.k_dtype, curve.v_dtype);
  curve.points.reserve(xs.size());
  for (const std::int64_t tokens : xs) {
    const KvFootprint f = kv_footprint(config, request.batch, tokens, request.prefill_chunk);
    curve.points.emplace_back(tokens, f.pool_bytes_needed);
  }
  return curve;
}

}  // namespace

std::vector<KvCurve> kv_curves(const PlanRequest& request, int n_points) {
  const std::vector<std::int64_t> xs = kv_curve_contexts(request.kv.max_context, n_points);
  const LayerGroupConfig& first = request.kv.groups.front();
  std::vector<KvCurve> curves;
  KvCurve own;
  own.this_model = true;
  own.n_kv_heads = request.kv.n_kv_heads;
  own.k_dtype = first.k_dtype;
  own.v_dtype = first.v_dtype;
  curves.push_back(sample(request, xs, own));
  for (const AttentionLayout layout :
       {AttentionLayout::Mha, AttentionLayout::Gqa, AttentionLayout::Mqa}) {
    const std::int64_t heads = layout_kv_heads(request.spec, layout);
    if (heads == 0) continue;
    for (const KvDtype dtype : std::array{KvDtype::F16, KvDtype::Int8, KvDtype::Int4}) {
      KvCurve c;
      c.layout = layout;
      c.n_kv_heads = heads;
      c.k_dtype = c.v_dtype = dtype;
      curves.push_back(sample(request, xs, c));
    }
  }
  return curves;
}

}  // namespace kvscope
