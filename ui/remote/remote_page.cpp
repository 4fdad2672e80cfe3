#include "remote/remote_page.h"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QVBoxLayout>

#include <algorithm>

#include "fits/catalogue.h"
#include "plan/units.h"
#include "remote/remote_lines.h"
#include "remote/remote_watcher.h"
#include "remote/time_chart.h"

namespace kvscope::ui {

namespace {

constexpr auto kUrlKey = "remote/url";

QString status_color(ScrapeStatus s) {
  return s == ScrapeStatus::Ok ? QStringLiteral("#59a14f") : QStringLiteral("#e15759");
}

QString q(const std::string& s) {
  return QString::fromStdString(s);
}

}  // namespace

RemotePage::RemotePage(QWidget* parent)
    : QWidget(parent),
      watcher_(new RemoteWatcher(this)),
      url_(new QLineEdit(this)),
      connect_(new QPushButton(tr("Connect"), this)),
      model_(new QComboBox(this)),
      gpu_(new QComboBox(this)),
      status_(new QLabel(this)),
      server_(new QLabel(this)) {
  FitsCatalogue catalogue = load_fits_catalogue();
  models_ = std::move(catalogue.models);
  gpus_ = std::move(catalogue.gpus);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(build_controls());
  layout->addWidget(status_);
  layout->addWidget(server_);
  layout->addWidget(build_charts(), 1);
  status_->setTextFormat(Qt::RichText);
  status_->setWordWrap(true);
  server_->setWordWrap(true);
  status_->setText(
      tr("Not connected. Give the address of a vLLM server, a llama-server started "
         "with --metrics, or kvscope-cli serve; /metrics is read every second."));
  connect(watcher_, &RemoteWatcher::scraped, this, &RemotePage::addScrape);
  update_plan();
}

QWidget* RemotePage::build_controls() {
  auto* box = new QWidget(this);
  auto* row = new QHBoxLayout(box);
  row->setContentsMargins(0, 0, 0, 0);
  url_->setPlaceholderText(QStringLiteral("http://127.0.0.1:8000"));
  url_->setText(QSettings().value(kUrlKey, QStringLiteral("http://127.0.0.1:8000")).toString());
  url_->setClearButtonEnabled(true);
  model_->addItem(tr("no plan"), QString());
  for (const ModelPreset& m : models_) model_->addItem(q(m.name), q(m.slug));
  for (const GpuPreset& g : gpus_) gpu_->addItem(q(g.name), q(g.slug));
  gpu_->setEnabled(false);
  model_->setToolTip(tr("The model the server runs: the planner predicts its KV pool"));
  row->addWidget(new QLabel(tr("Server"), box));
  row->addWidget(url_, 1);
  row->addWidget(connect_);
  row->addSpacing(12);
  row->addWidget(new QLabel(tr("Planner"), box));
  row->addWidget(model_);
  row->addWidget(new QLabel(tr("on"), box));
  row->addWidget(gpu_);
  connect(url_, &QLineEdit::returnPressed, this, &RemotePage::on_connect_clicked);
  connect(connect_, &QPushButton::clicked, this, &RemotePage::on_connect_clicked);
  connect(model_, &QComboBox::currentIndexChanged, this, [this] {
    gpu_->setEnabled(model_->currentIndex() > 0);
    update_plan();
  });
  connect(gpu_, &QComboBox::currentIndexChanged, this, &RemotePage::update_plan);
  return box;
}

QWidget* RemotePage::build_charts() {
  auto* box = new QWidget(this);
  auto* grid = new QGridLayout(box);
  grid->setContentsMargins(0, 0, 0, 0);
  charts_ = {
      new TimeChart(tr("KV cache usage (%)"),
                    {{tr("live"), QStringLiteral("%"), 1}, {tr("planner"), "%", 1, true}}, 100,
                    box),
      new TimeChart(tr("Requests"), {{tr("running"), "", 0}, {tr("waiting"), "", 0}}, 0, box),
      new TimeChart(tr("Preemptions (total)"), {{tr("preempted"), "", 0}}, 0, box),
      new TimeChart(tr("Prefix-cache hit rate (%)"), {{tr("hits"), QStringLiteral("%"), 1}}, 100,
                    box),
      new TimeChart(tr("Tokens per second"), {{tr("generated"), "/s", 1}, {tr("prompt"), "/s", 1}},
                    0, box),
      new TimeChart(tr("Time to first token (ms)"),
                    {{QStringLiteral("p50"), " ms", 0},
                     {QStringLiteral("p90"), " ms", 0},
                     {QStringLiteral("p99"), " ms", 0}},
                    0, box),
  };
  for (int i = 0; i < charts_.size(); ++i) grid->addWidget(charts_[i], i / 3, i % 3);
  return box;
}

void RemotePage::setPollInterval(double seconds) {
  interval_ = std::clamp(seconds, 0.05, 3600.0);
}

bool RemotePage::connected() const {
  return watcher_->running();
}

void RemotePage::on_connect_clicked() {
  if (connected()) {
    disconnectFromServer();
  } else {
    connectTo(url_->text());
  }
}

void RemotePage::connectTo(const QString& url) {
  QString error;
  url_->setText(url);
  if (!watcher_->start(url, interval_, &error)) {
    status_->setText(
        QStringLiteral("<span style='color:#e15759'>%1</span>").arg(error.toHtmlEscaped()));
    return;
  }
  QSettings().setValue(kUrlKey, url.trimmed());
  series_.clear();
  good_ = failed_ = 0;
  for (TimeChart* c : charts_) c->clear();
  connect_->setText(tr("Disconnect"));
  status_->setText(tr("Connecting to %1\u2026").arg(watcher_->url().toHtmlEscaped()));
  update_server_line();
}

void RemotePage::disconnectFromServer() {
  watcher_->stop();
  connect_->setText(tr("Connect"));
  status_->setText(tr("Disconnected from %1 (the charts keep what was read).")
                       .arg(watcher_->url().toHtmlEscaped()));
}

void RemotePage::addScrape(double time, const ScrapeResult& result) {
  show_status(result);
  if (!result.ok()) {
    ++failed_;
    return;
  }
  ++good_;
  const ServerSample sample = read_server_sample(*result.dump);
  const bool first = series_.empty();
  // a server that says its utilisation (vLLM's cache_config_info) is planned at it
  const double old_util =
      series_.latest() ? series_.latest()->gpu_memory_utilization.value_or(-1.0) : -1.0;
  series_.add(time, sample);
  if (first || sample.gpu_memory_utilization.value_or(-1.0) != old_util) update_plan();
  update_server_line();
  update_charts();
}

void RemotePage::show_status(const ScrapeResult& r) {
  QString text;
  if (r.ok()) {
    const ServerKind kind = detect_server_kind(*r.dump);
    text = tr("Connected: %1, %2").arg(q(std::string(server_kind_name(kind))), q(r.message));
    if (r.seconds > 0) text += tr(", answered in %1 ms").arg(r.seconds * 1000.0, 0, 'f', 0);
    if (kind == ServerKind::Unknown) {
      text += tr(". No vLLM, llama-server or KVScope metric names: nothing to chart.");
    }
  } else {
    const QString name = q(std::string(scrape_status_name(r.status)));
    text = QStringLiteral("%1%2: %3").arg(name.left(1).toUpper(), name.mid(1), q(r.message));
    if (connected()) text += tr(". Retrying every second.");
  }
  status_->setText(QStringLiteral("<span style='color:%1'>\u25cf</span> %2")
                       .arg(status_color(r.status), text.toHtmlEscaped()));
}

void RemotePage::update_plan() {
  plan_.reset();
  plan_error_.clear();
  const int m = model_->currentIndex() - 1;
  const int g = gpu_->currentIndex();
  if (m >= 0 && m < static_cast<int>(models_.size()) && g >= 0 && g < gpus_.size()) {
    PoolQuestion question;
    if (const ServerSample* s = series_.latest()) {
      if (s->gpu_memory_utilization && *s->gpu_memory_utilization > 0 &&
          *s->gpu_memory_utilization <= 1) {
        question.utilisation = *s->gpu_memory_utilization;
      }
      if (s->kv_block_size) question.block_size = *s->kv_block_size;
    }
    try {
      plan_ = plan_server_pool(models_[static_cast<std::size_t>(m)], gpus_[g], question);
    } catch (const Error& e) {
      plan_error_ = q(e.what());
    }
  }
  update_server_line();
  update_charts();
}

void RemotePage::update_server_line() {
  QStringList parts;
  if (const ServerSample* s = series_.latest()) {
    QString who = q(std::string(server_kind_name(s->kind)));
    if (!s->model_name.empty()) who += tr(" serving %1").arg(q(s->model_name));
    parts << who;
    if (const auto pool = s->kv_pool_tokens()) {
      parts << tr("KV pool %1 blocks x %2 = %3 tokens")
                   .arg(q(group_digits(*s->kv_pool_blocks)))
                   .arg(*s->kv_block_size)
                   .arg(q(group_digits(*pool)));
    } else if (s->kv_pool_blocks) {
      parts << tr("KV pool %1 blocks").arg(q(group_digits(*s->kv_pool_blocks)));
    }
  }
  if (plan_) {
    QString line = tr("planner: %1 on %2 at %3 as %5 counts: %4 tokens")
                       .arg(q(plan_->model), q(plan_->gpu))
                       .arg(plan_->question.utilisation, 0, 'f', 2)
                       .arg(q(group_digits(plan_->tokens)))
                       .arg(q(std::string(vllm_version_info(plan_->question.version).label)));
    const ServerSample* s = series_.latest();
    const std::optional<double> diff =
        s != nullptr ? compare_kv(*s, std::nullopt, *plan_).pool_difference_pct : std::nullopt;
    if (diff) {
      line += tr(" (%1% against the server's pool)").arg(QString::asprintf("%+.1f", *diff));
    } else if (s != nullptr && !s->kv_tokens && !s->kv_pool_tokens()) {
      line += tr("; the server does not say how many tokens it holds, so no planner line");
    }
    parts << line;
  } else if (!plan_error_.isEmpty()) {
    parts << tr("planner: %1").arg(plan_error_);
  }
  server_->setText(parts.join(QStringLiteral("; ")));
  // vLLM's accounting of the planned pool, term by term
  server_->setToolTip(plan_ ? q(plan_->formula) : QString());
  server_->setVisible(!parts.isEmpty());
}

void RemotePage::update_charts() {
  const RemoteLines l = remote_lines(series_, plan_ ? &*plan_ : nullptr);
  charts_[0]->setLineShown(1, plan_.has_value());
  const auto& p = series_.points();
  const double from = p.empty() ? 0.0 : p.front().seconds;
  const double to = p.empty() ? 0.0 : p.back().seconds;
  const QVector<QVector<QList<QPointF>>> lines = {l.kv,     l.queue,  l.preemptions,
                                                  l.prefix, l.tokens, l.ttft};
  for (int i = 0; i < charts_.size(); ++i) charts_[i]->setPoints(lines[i], from, to);
}

}  // namespace kvscope::ui
