#include "fits/summary.h"

#include <QEvent>
#include <QGridLayout>
#include <QLabel>
#include <QLocale>
#include <QVBoxLayout>

#include "fits/stack_bar.h"
#include "widgets/chart_legend.h"
#include "widgets/number_text.h"
#include "window/app_palette.h"

namespace kvscope::ui {

namespace {

QLabel* value_label(QWidget* parent, double scale) {
  auto* label = new QLabel(parent);
  QFont f = label->font();
  f.setBold(true);
  f.setPointSizeF(f.pointSizeF() * scale);
  label->setFont(f);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  return label;
}

// "2,229,614.9": one decimal, as the formula prints it, with thousands separators.
QString tokens_per_s(double value) {
  return QLocale(QLocale::English).toString(value, 'f', 1);
}

}  // namespace

FitsSummary::FitsSummary(QWidget* parent)
    : QWidget(parent),
      verdict_(value_label(this, 1.35)),
      bar_(new FitsStackBar(this)),
      legend_(new ChartLegend(this)),
      max_context_caption_(new QLabel(this)),
      max_context_(value_label(this, 1.15)),
      max_batch_caption_(new QLabel(this)),
      max_batch_(value_label(this, 1.15)),
      roofline_caption_(new QLabel(this)),
      roofline_(value_label(this, 1.15)),
      split_(new QLabel(this)) {
  verdict_->setWordWrap(true);
  split_->setWordWrap(true);
  split_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  split_->setVisible(false);
  legend_->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  auto* numbers = new QGridLayout;
  numbers->setHorizontalSpacing(24);
  numbers->setVerticalSpacing(0);
  const QList<QLabel*> captions = {max_context_caption_, max_batch_caption_, roofline_caption_};
  const QList<QLabel*> values = {max_context_, max_batch_, roofline_};
  for (int i = 0; i < captions.size(); ++i) {
    captions[i]->setWordWrap(true);
    numbers->addWidget(captions[i], 0, i, Qt::AlignBottom);
    numbers->addWidget(values[i], 1, i, Qt::AlignTop);
    numbers->setColumnStretch(i, 1);
  }
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(4);
  layout->addWidget(verdict_);
  layout->addWidget(bar_);
  layout->addWidget(legend_);
  layout->addWidget(split_);
  layout->addSpacing(4);
  layout->addLayout(numbers);
}

void FitsSummary::setAnswers(const FitsAnswers& a, std::int64_t total_bytes) {
  show_verdict(a);
  if (!a.ok()) {
    bar_->setPlan({}, total_bytes);
    legend_->setEntries({});
    for (QLabel* l : {max_context_, max_batch_, roofline_}) l->setText(QStringLiteral("\u2014"));
    split_->setVisible(false);
    return;
  }
  bar_->setPlan(a.plan, total_bytes);
  show_legend(a);
  show_maxima(a);
  show_roofline(a);
  show_split(a);
}

void FitsSummary::show_verdict(const FitsAnswers& a) {
  const MemoryPlan& p = a.plan;
  verdict_kind_ = a.ok() && p.fits ? Verdict::Fits : Verdict::DoesNotFit;
  if (!a.ok()) {
    verdict_->setText(tr("Cannot plan: %1").arg(QString::fromStdString(a.error)));
  } else if (!p.within_context) {
    verdict_->setText(
        tr("Does not fit: the context %1 exceeds the model's %2 tokens")
            .arg(count_text(a.request.context), count_text(a.request.kv.max_context)));
  } else if (a.split) {
    show_split_verdict(*a.split);
  } else if (p.fits) {
    verdict_->setText(tr("Fits, %1 to spare").arg(bytes_text(p.margin_bytes)));
  } else {
    verdict_->setText(tr("Does not fit, %1 short").arg(bytes_text(-p.margin_bytes)));
  }
  restyle();
}

// "Fits with 25 of 40 layers on the GPU": the question users ask of a model larger than
// their GPU (LM Studio's offload slider, llama.cpp's -ngl).
void FitsSummary::show_split_verdict(const LayerSplitPlan& s) {
  const QString of = tr("%1 of %2 layers").arg(s.gpu_layers).arg(s.n_layers);
  if (!s.fits) {
    verdict_->setText(tr("Does not fit with %1 on the GPU, %2 short")
                          .arg(of, bytes_text(s.gpu.total() - s.gpu_usable)));
  } else if (s.gpu_layers == 0) {
    verdict_kind_ = Verdict::Partly;
    verdict_->setText(tr("Not one layer fits the GPU: the CPU would run all %1").arg(s.n_layers));
  } else {
    verdict_kind_ = Verdict::Partly;
    verdict_->setText(tr("Fits with %1 on the GPU, the rest on the CPU").arg(of));
  }
}

// "KV cache 111 MiB (2,113 blocks)", and what sliding windows save when the model has them.
QString FitsSummary::kv_legend_text(const MemoryPlan& p) const {
  std::int64_t blocks = 0;
  for (const KvGroupFootprint& g : p.kv.groups) blocks += g.pool_blocks;
  QString text =
      tr("KV cache %1 (%2 blocks)").arg(bytes_text(p.kv.pool_bytes_needed), count_text(blocks));
  if (p.kv_full_cache_bytes > p.kv.pool_bytes_needed) {
    text += tr("; sliding windows save %1")
                .arg(bytes_text(p.kv_full_cache_bytes - p.kv.pool_bytes_needed));
  }
  return text;
}

void FitsSummary::show_legend(const FitsAnswers& a) {
  const MemoryPlan& p = a.plan;
  QVector<LegendEntry> entries = {
      {FitsStackBar::partColor(FitsStackBar::Weights),
       tr("weights %1").arg(bytes_text(p.weights.bytes))},
      {FitsStackBar::partColor(FitsStackBar::Kv), kv_legend_text(p)},
      {FitsStackBar::partColor(FitsStackBar::Workspace),
       tr("workspace %1").arg(bytes_text(p.workspace.total()))},
  };
  if (p.margin_bytes >= 0) {
    entries.push_back({FitsStackBar::partColor(FitsStackBar::Free),
                       tr("free %1").arg(bytes_text(p.margin_bytes))});
  } else {
    entries.push_back({QColor(0xd62728), tr("short %1").arg(bytes_text(-p.margin_bytes))});
  }
  entries.push_back({palette().color(QPalette::Mid),
                     tr("kept back (utilisation %1%)")
                         .arg(QString::number(a.request.budget.utilisation * 100, 'f', 0))});
  legend_->setEntries(entries);
}

void FitsSummary::show_maxima(const FitsAnswers& a) {
  max_context_caption_->setText(
      a.request.batch == 1
          ? tr("Longest context for 1 sequence")
          : tr("Longest context for %1 sequences").arg(count_text(a.request.batch)));
  QString context = tr("%1 tokens").arg(count_text(a.max_context.tokens));
  if (a.max_context.limited_by_max_context) context += tr(" (the model's limit)");
  max_context_->setText(context);
  max_batch_caption_->setText(tr("Most sequences of %1 tokens").arg(count_text(a.request.context)));
  max_batch_->setText(count_text(a.max_batch));
  if (a.split) {  // these two answer for the whole model on the GPU, not for the split
    for (QLabel* caption : {max_context_caption_, max_batch_caption_}) {
      caption->setText(tr("%1, every layer on the GPU").arg(caption->text()));
    }
  }
}

void FitsSummary::show_roofline(const FitsAnswers& a) {
  if (a.split && a.split->gpu_layers < a.split->n_layers && a.split->tokens_per_s > 0.0) {
    roofline_caption_->setText(tr("Decode speed limit, GPU and CPU layers (roofline)"));
    roofline_->setText(tr("%1 tokens/s").arg(tokens_per_s(a.split->tokens_per_s)));
    return;
  }
  if (!a.roofline) {
    roofline_caption_->setText(tr("Decode speed limit (roofline)"));
    roofline_->setText(tr("no bandwidth given"));
    return;
  }
  const RooflineEstimate& e = *a.roofline;
  roofline_caption_->setText(
      tr("Decode speed limit at %1 GB/s (roofline)").arg(e.bandwidth_gb_s, 0, 'g', 6));
  QString text = tr("%1 tokens/s").arg(tokens_per_s(e.tokens_per_s));
  if (a.request.batch > 1) {
    text += tr(" (%1 per sequence)").arg(tokens_per_s(e.tokens_per_s_per_sequence));
  }
  roofline_->setText(text);
}

// Each side's memory written out, and the split's roofline as each side's bytes over its
// own bandwidth.
void FitsSummary::show_split(const FitsAnswers& a) {
  split_->setVisible(a.split.has_value());
  if (!a.split) return;
  const LayerSplitPlan& s = *a.split;
  auto side = [](const SplitSide& d) {
    return tr("weights %1 + KV %2 + workspace %3 = <b>%4</b>")
        .arg(bytes_text(d.weights), bytes_text(d.kv), bytes_text(d.workspace),
             bytes_text(d.total()));
  };
  QString text = tr("GPU (VRAM), layers 0\u2013%1: %2 of %3 usable<br>CPU (RAM): %4")
                     .arg(s.gpu_layers - 1)
                     .arg(side(s.gpu), bytes_text(s.gpu_usable), side(s.cpu));
  if (s.gpu_layers == 0) {
    text = tr("CPU (RAM), every layer: %1").arg(side(s.cpu));
  }
  if (s.tokens_per_s > 0.0) {
    text += tr("<br>Per token: %1 read from VRAM + %2 from RAM = %3 ms")
                .arg(bytes_text(s.gpu_bytes_per_step), bytes_text(s.cpu_bytes_per_step))
                .arg(s.seconds_per_step * 1e3, 0, 'f', 1);
  }
  split_->setText(text);
}

void FitsSummary::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) restyle();
}

void FitsSummary::restyle() {
  const bool dark = is_dark(palette());
  const QColor good = dark ? QColor(0x6fd37a) : QColor(0x1a7f37);
  const QColor bad = error_text_color(palette());
  QPalette p = verdict_->palette();
  const QColor partly = dark ? QColor(0xe3b341) : QColor(0x9a6700);
  p.setColor(QPalette::WindowText, verdict_kind_ == Verdict::Fits     ? good
                                   : verdict_kind_ == Verdict::Partly ? partly
                                                                      : bad);
  verdict_->setPalette(p);
}

}  // namespace kvscope::ui
