#include "demos/gqa/gqa_page.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QButtonGroup>
#include <QChartView>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFormLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QRadioButton>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <exception>

#include "demos/common/controls.h"
#include "demos/common/table.h"
#include "demos/gqa/diagram.h"
#include "plan/kv_curves.h"
#include "widgets/chart_style.h"
#include "widgets/number_text.h"

namespace kvscope::ui {
namespace {

constexpr AttentionLayout kLayouts[] = {AttentionLayout::Mha, AttentionLayout::Gqa,
                                        AttentionLayout::Mqa};
constexpr KvDtype kDtypes[] = {KvDtype::F16, KvDtype::Int8, KvDtype::Int4};

QString layout_name(int layout) {
  const std::string_view n = attention_layout_name(kLayouts[layout]);
  return QString::fromLatin1(n.data(), static_cast<qsizetype>(n.size()));
}

// The layout a model has: MHA when every query head has its own KV head, MQA with one.
int own_layout(const ModelSpec& s) {
  if (s.n_kv_heads == s.n_heads) return GqaDemoPage::kMha;
  return s.n_kv_heads == 1 ? GqaDemoPage::kMqa : GqaDemoPage::kGqa;
}

}  // namespace

GqaDemoPage::GqaDemoPage(QWidget* parent)
    : QWidget(parent),
      chooser_(new DemoModelChooser(this)),
      layouts_(new QButtonGroup(this)),
      diagram_(new GqaDiagram(this)),
      table_(make_figure_table(3, 8, this)),
      table_note_(new QLabel(this)) {
  const QString intro =
      tr("<b>Grouped-query attention.</b> Every query head reads the keys and values of one KV "
         "head, and the cache stores K and V per KV head, not per query head. Sharing a KV head "
         "among a group of query heads (GQA; MQA shares one among all) divides the cache by "
         "the group size. Sizes come from the engine's planner, the allocator's own bytes "
         "function.");
  table_->setObjectName(QStringLiteral("gqaTable"));
  table_note_->setWordWrap(true);
  auto* right = new QVBoxLayout;
  right->addWidget(diagram_, 3);
  right->addWidget(table_, 0);
  right->addWidget(table_note_);
  right->addWidget(build_chart(), 2);
  set_demo_layout(this, intro, build_controls(), right);
  connect(chooser_, &DemoModelChooser::modelChanged, this, [this] {
    if (chooser_->hasModels())
      layouts_->button(own_layout(chooser_->currentSpec()))->setChecked(true);
    refresh();
  });
  connect(layouts_, &QButtonGroup::idToggled, this, [this](int, bool on) {
    if (on) show_diagram();
  });
  connect(dtype_, &QComboBox::currentIndexChanged, this, &GqaDemoPage::refresh);
  connect(budget_gib_, &QDoubleSpinBox::valueChanged, this, &GqaDemoPage::refresh);
  if (chooser_->hasModels())
    layouts_->button(own_layout(chooser_->currentSpec()))->setChecked(true);
  restyle();
  refresh();
}

QWidget* GqaDemoPage::build_controls() {
  auto* model_box = new QGroupBox(tr("Model"), this);
  shape_ = new QLabel(model_box);
  shape_->setWordWrap(true);
  auto* model_layout = new QVBoxLayout(model_box);
  model_layout->addWidget(chooser_);
  model_layout->addWidget(shape_);

  auto* diagram_box = new QGroupBox(tr("Diagram shows"), this);
  auto* diagram_layout = new QVBoxLayout(diagram_box);
  for (int l = kMha; l <= kMqa; ++l) {
    auto* b = new QRadioButton(layout_name(l), diagram_box);
    b->setObjectName(QStringLiteral("show%1").arg(layout_name(l)));
    layouts_->addButton(b, l);
    diagram_layout->addWidget(b);
  }

  auto* cache_box = new QGroupBox(tr("Cache"), this);
  dtype_ = new QComboBox(cache_box);
  dtype_->setObjectName(QStringLiteral("kvDtype"));
  for (KvDtype d : kDtypes) dtype_->addItem(dtype_text(d));
  budget_gib_ = make_kv_budget_spin(cache_box);
  auto* form = new QFormLayout(cache_box);
  form->addRow(tr("K and V stored as"), dtype_);
  form->addRow(tr("KV memory budget"), budget_gib_);

  return make_controls_column(this, {model_box, diagram_box, cache_box}, &notice_);
}

QWidget* GqaDemoPage::build_chart() {
  chart_ = new QChartView(new QChart, this);
  setup_chart_view(chart_);
  chart_->setMinimumHeight(170);
  bars_ = new QBarSeries;
  bytes_set_ = new QBarSet(tr("KV per token"));
  bars_->append(bytes_set_);
  bars_->setLabelsVisible(true);
  bars_->setLabelsPosition(QAbstractBarSeries::LabelsOutsideEnd);
  bars_->setLabelsPrecision(3);
  layout_axis_ = new QBarCategoryAxis;
  layout_axis_->setCategories({layout_name(kMha), layout_name(kGqa), layout_name(kMqa)});
  bytes_axis_ = new QValueAxis;
  bytes_axis_->setLabelFormat(QStringLiteral("%.4g"));
  bytes_axis_->setTickCount(4);
  QChart* c = chart_->chart();
  c->legend()->hide();
  c->addSeries(bars_);
  c->addAxis(layout_axis_, Qt::AlignBottom);
  c->addAxis(bytes_axis_, Qt::AlignLeft);
  bars_->attachAxis(layout_axis_);
  bars_->attachAxis(bytes_axis_);
  return chart_;
}

std::int64_t GqaDemoPage::layoutKvHeads(int layout) const {
  return kv_heads_.at(static_cast<std::size_t>(layout));
}

void GqaDemoPage::setLoadedModel(const std::optional<ModelInfo>& info) {
  if (info) {
    const auto* d = std::find(std::begin(kDtypes), std::end(kDtypes), info->k_dtype);
    const QSignalBlocker block(dtype_);
    dtype_->setCurrentIndex(static_cast<int>(d - std::begin(kDtypes)));
  }
  chooser_->setLoadedModel(info);  // emits modelChanged: refresh
}

void GqaDemoPage::show_diagram() {
  const int l = std::max(0, layouts_->checkedId());
  if (!chooser_->hasModels() || kv_heads_[static_cast<std::size_t>(l)] == 0) {
    diagram_->setHeads(0, 0);
    return;
  }
  diagram_->setHeads(chooser_->currentSpec().n_heads, kv_heads_[static_cast<std::size_t>(l)]);
}

void GqaDemoPage::refresh() {
  notice_->clear();
  kv_heads_ = {};
  if (!chooser_->hasModels()) {
    notice_->setText(tr("No model to show: %1").arg(chooser_->catalogueError()));
    table_->clearContents();
    show_diagram();
    return;
  }
  const ModelSpec& s = chooser_->currentSpec();
  const KvDtype dtype = kDtypes[std::max(0, dtype_->currentIndex())];
  const auto budget = kv_budget_bytes(budget_gib_);
  describe_model(s, budget);
  try {
    const KvCapacity model = kv_capacity(s, s.n_kv_heads, dtype, budget);
    std::array<double, 3> per_token{};
    for (int l = kMha; l <= kMqa; ++l) {
      const std::int64_t heads = layout_kv_heads(s, kLayouts[l]);
      kv_heads_[static_cast<std::size_t>(l)] = heads;
      std::optional<KvCapacity> c;
      if (heads > 0) c = kv_capacity(s, heads, dtype, budget);
      fill_row(l, c, model);
      per_token[static_cast<std::size_t>(l)] = c ? c->bytes_per_token : 0;
      QAbstractButton* b = layouts_->button(l);
      b->setEnabled(heads > 0);
      const QString heads_text = heads == 1 ? tr("1 KV head") : tr("%1 KV heads").arg(heads);
      b->setText(heads == 0 ? tr("%1 (no such split)").arg(layout_name(l))
                            : tr("%1 \u00b7 %2%3")
                                  .arg(layout_name(l), heads_text,
                                       l == own_layout(s) ? tr(" (this model)") : QString()));
    }
    show_per_token(per_token, s.n_layers, dtype);
  } catch (const std::exception& e) {
    notice_->setText(QString::fromUtf8(e.what()));
    table_->clearContents();
  }
  fit_figure_table(table_);
  show_diagram();
}

// The model's shape beside the chooser, and the table's headers and note for it.
void GqaDemoPage::describe_model(const ModelSpec& s, std::int64_t budget) {
  shape_->setText(tr("%1 layers \u00b7 %2 query heads \u00b7 %3 KV heads \u00b7 head_dim %4 \u00b7 "
                     "%5-token context%6")
                      .arg(s.n_layers)
                      .arg(s.n_heads)
                      .arg(s.n_kv_heads)
                      .arg(s.head_dim)
                      .arg(count_text(s.context_length))
                      .arg(s.sliding_window > 0
                               ? tr(" \u00b7 sliding window %1").arg(count_text(s.sliding_window))
                               : QString()));
  table_->setHorizontalHeaderLabels(
      {tr("Layout"), tr("KV heads"), tr("Q heads per\nKV head"), tr("KV per token\nper layer"),
       tr("KV per token\n(%1 layers)").arg(s.n_layers), tr("vs this\nmodel"),
       tr("At %1\ntokens").arg(count_text(s.context_length)),
       tr("Context in\n%1").arg(bytes_text(budget))});
  table_note_->setText(
      tr("At %1 tokens: the KV of one sequence at the model's context length. Context in the "
         "budget: the longest single sequence whose K and V fit, searched past the model's own "
         "limit. Whole blocks of 16 tokens, as the allocator takes them.")
          .arg(count_text(s.context_length)));
}

// The bars: KV per token of MHA, GQA and MQA in the unit that suits the largest.
void GqaDemoPage::show_per_token(const std::array<double, 3>& per_token, std::int64_t n_layers,
                                 KvDtype dtype) {
  const double top = *std::max_element(per_token.begin(), per_token.end());
  const double unit = top >= 1024.0 * 1024.0 ? 1024.0 * 1024.0 : top >= 1024.0 ? 1024.0 : 1.0;
  QList<qreal> values;
  for (const double b : per_token) values.append(b / unit);
  if (bytes_set_->count() > 0) bytes_set_->remove(0, bytes_set_->count());
  bytes_set_->append(values);
  bytes_axis_->setRange(0, *std::max_element(values.begin(), values.end()) * 1.2);
  bytes_axis_->applyNiceNumbers();
  bytes_axis_->setTitleText(unit > 1024.0 ? tr("MiB") : unit > 1.0 ? tr("KiB") : tr("bytes"));
  chart_->chart()->setTitle(
      tr("KV cache per token, all %1 layers, K and V in %2").arg(n_layers).arg(dtype_text(dtype)));
}

void GqaDemoPage::fill_row(int row, const std::optional<KvCapacity>& c, const KvCapacity& model) {
  const ModelSpec& s = chooser_->currentSpec();
  const bool own = row == own_layout(s);
  QStringList cells;
  cells << (own ? tr("%1 (this model)").arg(layout_name(row)) : layout_name(row));
  if (!c) {
    cells << QStringLiteral("\u2014");
  } else {
    const double ratio = c->bytes_per_token / model.bytes_per_token;
    cells << QString::number(c->n_kv_heads) << QString::number(s.n_heads / c->n_kv_heads)
          << bytes_text(std::llround(c->bytes_per_token_per_layer))
          << bytes_text(std::llround(c->bytes_per_token)) << tr("%1\u00d7").arg(ratio, 0, 'g', 3)
          << bytes_text(c->full_context_bytes)
          << context_fits_text(c->context_tokens, c->at_planner_limit, s.sliding_window);
  }
  set_figure_row(table_, row, cells, own);
}

void GqaDemoPage::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) restyle();
}

void GqaDemoPage::restyle() {
  style_chart(chart_->chart(), palette());
  bytes_set_->setColor(series_color(0));
  bytes_set_->setBorderColor(series_color(0).darker(130));
  bytes_set_->setLabelColor(palette().color(QPalette::Text));
  fit_figure_table(table_);
}

}  // namespace kvscope::ui
