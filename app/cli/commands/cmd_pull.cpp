// kvscope-cli pull CATALOG_NAME[:QUANT]: downloads a model of the catalog
// (resources/catalog/models.json) into ~/.cache/kvscope/models, where the Models page and
// `models` find it, and prints its path. Before downloading it says what the file is and,
// with --gpu / --vram, whether it fits (the planner's answer from the catalog's shape).
// Progress goes to stderr; an interrupted pull resumes where it stopped (HTTP Range); the
// sha256 is checked when the catalog has it. `pull --list` prints the catalog.
//
// The download is ModelDownload (ui/models), on Qt Network: the app and the CLI share one
// downloader, its resume, checksum and disk checks tested once. A kvscope-cli built without
// Qt (-DKVSCOPE_GUI=OFF) has no pull and says so.
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli/arg_parser.h"
#include "cli/catalog_path.h"
#include "cli/command.h"
#include "cli/presets_path.h"
#include "kv/format/kv_format.h"
#include "model/catalog/model_catalog.h"
#include "model/discovery/model_places.h"
#include "plan/catalog_fit.h"
#include "plan/presets.h"
#include "plan/units.h"
#include "util/error.h"

#if KVSCOPE_HAVE_DOWNLOAD
#include <unistd.h>

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QNetworkAccessManager>

#include "models/model_download.h"
#endif

namespace kvscope::cli {

namespace {

namespace fs = std::filesystem;

void declare_pull_options(ArgParser& p) {
  p.option({"--dir"},
           "download into this folder (default $KVSCOPE_MODELS_DIR, else ~/.cache/kvscope/models, "
           "as get-model.sh)");
  p.option({"--catalog"}, "the catalog file (default share/kvscope/catalog/models.json)");
  p.option({"--gpu"}, "say first whether it fits this GPU preset, e.g. rtx-4090");
  p.option({"--vram"}, "say first whether it fits this much memory, e.g. 12GiB");
  p.option({"-c", "--ctx"}, "tokens of context to plan for (default: the model's limit)");
  p.option({"--kv"}, "K and V cache dtype: f16, int8, int4 (default: the most precise that fits)");
  p.option({"--presets"}, "folder holding gpus.json");
  p.flag({"--list"}, "print the catalog instead of downloading");
  p.note(
      "The file comes from $HF_ENDPOINT (a Hugging Face mirror) when it is set, else from "
      "https://huggingface.co. Interrupted pulls resume; run the same command again.");
}

std::optional<LocalFitQuestion> read_question(const ArgParser& p, std::string& label) {
  if (p.has("--gpu") && p.has("--vram")) throw_error<UsageError>("give --gpu or --vram, not both");
  if (!p.has("--gpu") && !p.has("--vram")) return std::nullopt;
  LocalFitQuestion q;
  if (auto gpu_name = p.get("--gpu")) {
    const std::vector<GpuPreset> gpus = load_gpu_presets(presets_dir(p) / "gpus.json");
    const GpuPreset& gpu = find_gpu_preset(gpus, *gpu_name);
    q.memory_bytes = gpu.memory_bytes;
    q.cuda = gpu_workspace_options(gpu);
    label = fmt::format("{} ({})", gpu.name, human_bytes(gpu.memory_bytes));
  } else {
    q.memory_bytes = parse_byte_size(p.required("--vram"), "--vram");
    label = human_bytes(q.memory_bytes);
  }
  q.context = p.get_int("-c", 0, 1, std::int64_t{1} << 30);
  if (auto kv = p.get("--kv")) q.kv_dtype = parse_kv_dtype(*kv);
  return q;
}

int print_catalog(const std::vector<CatalogModel>& catalog,
                  const std::optional<LocalFitQuestion>& q, const std::string& label) {
  if (q) fmt::print("Planner answers for {}\n\n", label);
  for (const CatalogModel& m : catalog) {
    for (const CatalogFile& f : m.files) {
      const std::string answer = !m.supported ? describe_local_fit(answer_catalog_fit(m, f, {}))
                                 : q          ? describe_local_fit(answer_catalog_fit(m, f, *q))
                                              : "";
      fmt::print("{:<40} {:>11}  {}{}\n", m.name + ":" + f.quant, catalog_size_text(f),
                 f.sha256.empty() ? "(no sha256) " : "", answer);
    }
  }
  return 0;
}

fs::path default_dir() {
  if (auto home = process_env()("HOME")) return kvscope_models_dir(*home, process_env());
  throw_error<UsageError>("HOME is not set; give the folder with --dir DIR");
}

#if KVSCOPE_HAVE_DOWNLOAD
// Progress on stderr: one rewritten line on a terminal, a line every few seconds otherwise.
int run_download(const CatalogFile& f, const std::string& url, const fs::path& dest) {
  int argc = 1;
  char name[] = "kvscope-cli";
  char* argv[] = {name, nullptr};
  QCoreApplication app(argc, argv);
  QNetworkAccessManager network;
  ui::DownloadRequest request{.url = QUrl(QString::fromStdString(url)),
                              .destination = QString::fromStdString(dest.string()),
                              .sha256 = QString::fromStdString(f.sha256),
                              .expected_bytes = f.bytes,
                              .exact_bytes = f.exact_bytes};
  ui::ModelDownload download(request, &network);
  const bool tty = isatty(fileno(stderr)) != 0;
  qint64 last_line_ms = -1;
  QElapsedTimer clock;
  clock.start();
  QObject::connect(&download, &ui::ModelDownload::progressChanged,
                   [&](const ui::DownloadProgress& p) {
                     const QString text = ui::ModelDownload::describe(p);
                     if (tty) {
                       fmt::print(stderr, "\r  {:<60}", text.toStdString());
                     } else if (last_line_ms < 0 || clock.elapsed() - last_line_ms > 5000) {
                       last_line_ms = clock.elapsed();
                       fmt::print(stderr, "  {}\n", text.toStdString());
                     }
                   });
  QObject::connect(&download, &ui::ModelDownload::finished, &app, &QCoreApplication::quit);
  download.start();
  if (download.running()) app.exec();
  if (tty) fmt::print(stderr, "\n");
  if (download.state() != ui::ModelDownload::State::Finished) {
    throw_error<Error>("{}", download.error().toStdString());
  }
  fmt::print(stderr, "pull: {} ({}){}\n", dest.string(), human_bytes(download.progress().received),
             f.sha256.empty() ? ", no sha256 to check" : ", sha256 checked");
  fmt::print("{}\n", dest.string());
  return 0;
}
#else
int run_download(const CatalogFile&, const std::string&, const fs::path&) {
  throw_error<UsageError>(
      "this kvscope-cli was built without Qt (-DKVSCOPE_GUI=OFF), which pull downloads with; "
      "build with the GUI, or use packaging/get-model.sh for the default model");
}
#endif

}  // namespace

int cmd_pull(const Args& args) {
  ArgParser p("pull", "CATALOG_NAME[:QUANT] [--gpu NAME | --vram SIZE] [--dir DIR], or --list");
  declare_pull_options(p);
  if (!p.parse(args)) return 0;
  const std::vector<CatalogModel> catalog = load_model_catalog(catalog_file(p));
  std::string label;
  const std::optional<LocalFitQuestion> q = read_question(p, label);
  if (p.has("--list")) return print_catalog(catalog, q, label);
  if (p.positional().size() != 1) {
    throw_error<UsageError>("give one CATALOG_NAME[:QUANT] (see `pull --list`)");
  }
  const CatalogChoice c = find_catalog_file(catalog, p.positional().front());
  if (!c.model->supported) {
    throw_error<UsageError>("{}: {}", c.model->name,
                            answer_catalog_fit(*c.model, *c.file, {}).error);
  }
  const std::string endpoint =
      process_env()("HF_ENDPOINT").value_or(std::string(CatalogFile::kHuggingFaceEndpoint));
  const std::string url = c.file->url(endpoint);
  const fs::path dir = p.has("--dir") ? fs::path(*p.get("--dir")) : default_dir();
  fmt::print(stderr, "pull: {} {} ({}) from {}\n", c.model->display_name, c.file->quant,
             catalog_size_text(*c.file), url);
  if (q) {
    fmt::print(stderr, "pull: on {}: {}\n", label,
               describe_local_fit(answer_catalog_fit(*c.model, *c.file, *q)));
  }
  return run_download(*c.file, url, dir / c.file->file);
}

}  // namespace kvscope::cli
