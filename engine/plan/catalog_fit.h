// The planner's answer for a catalog file before it is downloaded (issue #16: "downloads
// that show what fits"). The catalog gives the model's shape and the file's size, which
// is all answer_local_fit() needs: the answer is the one the Models page gives once the
// file is on disk, with the file's size standing in for its tensors' bytes (the header,
// a few MB of vocabulary and template, is counted as weights too: the answer errs on the
// safe side).
#pragma once

#include "model/catalog/model_catalog.h"
#include "model/discovery/local_model.h"
#include "plan/local_model_fit.h"

namespace kvscope {

// The entry as discovery would describe the downloaded file, from the catalog alone.
// Weights read per decoded token: all of them when the embeddings are tied (the table is
// the output projection too), else all but the token table, of which one row; the table's
// share of the file is taken as vocab x dim of n_params.
LocalModel catalog_local_model(const CatalogModel& model, const CatalogFile& file);

// answer_local_fit() on catalog_local_model(); a model whose architecture the engine does
// not run gets `error` "not supported yet: ...". Never throws.
LocalFitAnswer answer_catalog_fit(const CatalogModel& model, const CatalogFile& file,
                                  const LocalFitQuestion& question);

}  // namespace kvscope
