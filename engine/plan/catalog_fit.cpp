#include "plan/catalog_fit.h"

#include <fmt/format.h>

#include "model/gguf/gguf_model.h"

namespace kvscope {

LocalModel catalog_local_model(const CatalogModel& model, const CatalogFile& file) {
  LocalModel m;
  m.name = model.name + ":" + file.quant;
  m.source = "catalog";
  m.path = file.file;
  m.file_bytes = static_cast<std::uint64_t>(file.bytes);
  m.architecture = model.spec.architecture;
  m.n_params = model.n_params;
  m.weight_type = file.quant;
  m.context_length = model.spec.context_length;
  m.spec = model.spec;
  m.weight_bytes = file.bytes;
  m.weight_read_per_token = file.bytes;
  if (!model.spec.tied_embeddings && model.n_params > 0) {
    const double table_share = static_cast<double>(model.spec.vocab_size) *
                               static_cast<double>(model.spec.dim) /
                               static_cast<double>(model.n_params);
    const auto table = static_cast<std::int64_t>(static_cast<double>(file.bytes) * table_share);
    m.weight_read_per_token -= table - table / model.spec.vocab_size;
  }
  return m;
}

LocalFitAnswer answer_catalog_fit(const CatalogModel& model, const CatalogFile& file,
                                  const LocalFitQuestion& question) {
  if (!model.supported) {
    LocalFitAnswer a;
    a.error = fmt::format("not supported yet: KVScope runs {}, this is {}",
                          gguf_supported_architectures_text(), model.spec.architecture);
    return a;
  }
  return answer_local_fit(catalog_local_model(model, file), question);
}

}  // namespace kvscope
