#include "demos/quant/quant_page.h"

#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include <cmath>
#include <exception>

#include "demos/common/controls.h"
#include "demos/common/table.h"
#include "demos/quant/channel_chart.h"
#include "demos/quant/layer_chart.h"
#include "plan/kv_capacity.h"
#include "widgets/number_text.h"

namespace kvscope::ui {
namespace {

constexpr KvDtype kDtypes[] = {KvDtype::F16, KvDtype::Int8, KvDtype::Int4};

}  // namespace

KvQuantDemoPage::KvQuantDemoPage(QWidget* parent)
    : QWidget(parent),
      chooser_(new DemoModelChooser(this)),
      table_(make_figure_table(3, 8, this)),
      table_note_(new QLabel(this)),
      channel_chart_(new QuantChannelChart(this)),
      layer_chart_(new QuantLayerChart(this)) {
  const QString intro =
      tr("<b>KV cache quantization.</b> int8 stores each group of 32 values of a K or V vector "
         "with one scale, set by the group's largest value, so a few outlier channels (as real "
         "keys have) set the scale for their whole group. int4 first turns each vector with a "
         "Walsh-Hadamard transform that spreads the outliers over every channel (queries and "
         "the output are turned alike, so attention is unchanged), then stores groups of 32 "
         "values (keys: an offset per block and a range per group of 16). Fewer bytes per "
         "token fit longer contexts, at the price of rounding error. The CPU backend also keeps "
         "each conversation's newest two blocks as f16 copies and reads those exactly: attention "
         "weighs the latest tokens most, so this removes most of int4's cost for a small fixed "
         "amount of memory. The errors are the engine's own quantize / dequantize round trips; "
         "sizes and capacity come from its planner.");
  table_->setObjectName(QStringLiteral("quantTable"));
  table_note_->setWordWrap(true);
  auto* charts = new QHBoxLayout;
  charts->addWidget(channel_chart_, 3);
  charts->addWidget(layer_chart_, 2);
  auto* right = new QVBoxLayout;
  right->addWidget(table_);
  right->addWidget(table_note_);
  right->addLayout(charts, 1);
  set_demo_layout(this, intro, build_controls(), right);
  for (QSpinBox* s : {head_dim_, vectors_, outliers_, seed_}) {
    connect(s, &QSpinBox::valueChanged, this, &KvQuantDemoPage::recompute_synthetic);
  }
  connect(outlier_scale_, &QDoubleSpinBox::valueChanged, this,
          &KvQuantDemoPage::recompute_synthetic);
  connect(budget_gib_, &QDoubleSpinBox::valueChanged, this, &KvQuantDemoPage::recompute_capacity);
  connect(chooser_, &DemoModelChooser::modelChanged, this, &KvQuantDemoPage::recompute_capacity);
  for (int r = 0; r < 3; ++r) {
    set_figure_row(table_, r, {dtype_text(kDtypes[r])});
  }
  recompute_synthetic();
  recompute_capacity();
}

QWidget* KvQuantDemoPage::build_controls() {
  auto* synthetic = new QGroupBox(tr("Synthetic K/V"), this);
  head_dim_ = new QSpinBox(synthetic);
  vectors_ = new QSpinBox(synthetic);
  outliers_ = new QSpinBox(synthetic);
  seed_ = new QSpinBox(synthetic);
  struct SpinSetup {
    QSpinBox* box;
    const char* name;
    int min, max, value;
  };
  for (const SpinSetup& s :
       {SpinSetup{head_dim_, "headDim", 8, 256, 128},
        SpinSetup{vectors_, "vectors", 16, 8192, 1024},
        SpinSetup{outliers_, "outlierChannels", 0, 16, 2}, SpinSetup{seed_, "seed", 1, 99999, 1}}) {
    s.box->setObjectName(QLatin1String(s.name));
    s.box->setRange(s.min, s.max);
    s.box->setValue(s.value);
  }
  outlier_scale_ = new QDoubleSpinBox(synthetic);
  outlier_scale_->setObjectName(QStringLiteral("outlierScale"));
  outlier_scale_->setRange(1.0, 100.0);
  outlier_scale_->setDecimals(1);
  outlier_scale_->setValue(10.0);
  outlier_scale_->setSuffix(QStringLiteral(" \u00d7"));
  outlier_scale_->setToolTip(tr("Standard deviation of the outlier channels; the others have 1"));
  auto* form = new QFormLayout(synthetic);
  form->addRow(tr("head_dim"), head_dim_);
  form->addRow(tr("Vectors (tokens \u00d7 heads)"), vectors_);
  form->addRow(tr("Outlier channels"), outliers_);
  form->addRow(tr("Outlier size"), outlier_scale_);
  form->addRow(tr("Random seed"), seed_);

  auto* capacity = new QGroupBox(tr("Capacity"), this);
  budget_gib_ = make_kv_budget_spin(capacity);
  auto* capacity_form = new QFormLayout(capacity);
  capacity_form->addRow(chooser_);
  capacity_form->addRow(tr("KV memory budget"), budget_gib_);

  return make_controls_column(this, {synthetic, capacity}, &notice_);
}

SyntheticKvSpec KvQuantDemoPage::syntheticSpec() const {
  SyntheticKvSpec s;
  s.head_dim = head_dim_->value();
  s.n_vectors = vectors_->value();
  s.n_outlier_channels = outliers_->value();
  s.outlier_scale = static_cast<float>(outlier_scale_->value());
  s.seed = static_cast<std::uint64_t>(seed_->value());
  return s;
}

void KvQuantDemoPage::set_headers() {
  const bool have = chooser_->hasModels();
  const std::int64_t layers = have ? chooser_->currentSpec().n_layers : 0;
  const auto budget = kv_budget_bytes(budget_gib_);
  table_->setHorizontalHeaderLabels(
      {tr("K and V\nstored as"), tr("Bytes per\ntoken \u00b7 head"), tr("K error\n(rel. RMS)"),
       tr("V error\n(rel. RMS)"), tr("Measured\n(loaded model)"), tr("KV per token\nper layer"),
       tr("KV per token\n(%1 layers)").arg(layers), tr("Context in\n%1").arg(bytes_text(budget))});
  table_->horizontalHeaderItem(kBytesPerHead)
      ->setToolTip(tr("K and V of one token for one KV head of the synthetic head_dim %1, as "
                      "the cache stores them (int4 keys: with their share of the block offsets)")
                       .arg(head_dim_->value()));
  fit_figure_table(table_);
}

const QuantRoundTrip& KvQuantDemoPage::roundTrip(KvSide side, int row) const {
  return trips_.at(side == KvSide::K ? 0 : 1).at(static_cast<std::size_t>(row));
}

// Every dtype as keys and as values (they differ only for int4: offset int4 keys); the
// chart gets f16, int8, int4 V and int4 K.
void KvQuantDemoPage::recompute_synthetic() {
  const SyntheticKv kv = make_synthetic_kv(syntheticSpec());
  for (auto& t : trips_) t.clear();
  for (int r = 0; r < 3; ++r) {
    trips_[0].push_back(kv_quant_round_trip(KvSide::K, kDtypes[r], kv.values, kv.head_dim));
    trips_[1].push_back(kv_quant_round_trip(KvSide::V, kDtypes[r], kv.values, kv.head_dim));
    const QuantRoundTrip& k = trips_[0].back();
    const QuantRoundTrip& v = trips_[1].back();
    table_->item(r, kBytesPerHead)
        ->setText(bytes_text(std::llround(k.bytes_per_vector + v.bytes_per_vector)));
    table_->item(r, kKError)->setText(percent_text(k.total.relative_rms_error()));
    table_->item(r, kVError)->setText(percent_text(v.total.relative_rms_error()));
  }
  channel_chart_->setRoundTrips({trips_[0][0], trips_[0][1], trips_[1][2], trips_[0][2]},
                                kv.outlier_channels);
  set_headers();
}

void KvQuantDemoPage::recompute_capacity() {
  notice_->clear();
  set_headers();
  if (!chooser_->hasModels()) {
    notice_->setText(tr("No model for the capacity columns: %1").arg(chooser_->catalogueError()));
    return;
  }
  const ModelSpec& s = chooser_->currentSpec();
  const auto budget = kv_budget_bytes(budget_gib_);
  try {
    for (int r = 0; r < 3; ++r) {
      const KvCapacity c = kv_capacity(s, s.n_kv_heads, kDtypes[r], budget);
      table_->item(r, kPerLayer)->setText(bytes_text(std::llround(c.bytes_per_token_per_layer)));
      table_->item(r, kPerToken)->setText(bytes_text(std::llround(c.bytes_per_token)));
      table_->item(r, kFits)->setText(
          context_fits_text(c.context_tokens, c.at_planner_limit, s.sliding_window));
    }
    table_note_->setText(
        tr("Capacity columns: %1 (%2 KV heads \u00d7 head_dim %3), one sequence, K and V only, in "
           "whole blocks of 16 tokens; the longest context is searched past the model's own "
           "limit of %4 tokens.")
            .arg(chooser_->currentName())
            .arg(s.n_kv_heads)
            .arg(s.head_dim)
            .arg(count_text(s.context_length)));
  } catch (const std::exception& e) {
    notice_->setText(QString::fromUtf8(e.what()));
  }
}

void KvQuantDemoPage::setLoadedModel(const std::optional<ModelInfo>& info) {
  layer_chart_->clear();
  for (int r = 0; r < 3; ++r) table_->item(r, kMeasured)->setText(QString());
  fit_figure_table(table_);
  chooser_->setLoadedModel(info);  // emits modelChanged: recompute_capacity
}

// The error the engine measured over every layer, per side, in the row of that side's
// dtype ("K 0.0283%" and "V 0.0279%" on two lines when both sides use it).
void KvQuantDemoPage::setPanelFrame(const PanelFrame& frame) {
  layer_chart_->setFrame(frame);
  if (frame.cache.groups.empty()) return;
  QuantErrorSums k, v;
  for (const LayerKvSnapshot& l : frame.cache.layers) {
    k += l.k;
    v += l.v;
  }
  const LayerGroupSnapshot& g = frame.cache.groups.front();
  bool changed = false;
  for (int r = 0; r < 3; ++r) {
    QStringList parts;
    if (k.count > 0 && g.k_dtype == kDtypes[r]) {
      parts << tr("K %1").arg(percent_text(k.relative_rms_error()));
    }
    if (v.count > 0 && g.v_dtype == kDtypes[r]) {
      parts << tr("V %1").arg(percent_text(v.relative_rms_error()));
    }
    // One line per side: a row with both (K and V in one dtype) is drawn two lines high.
    const QString text = parts.join(QLatin1Char('\n'));
    QTableWidgetItem* item = table_->item(r, kMeasured);
    if (item->text() != text) {
      item->setText(text);
      item->setToolTip(text);
      changed = true;
    }
  }
  if (changed) fit_figure_table(table_);
}

}  // namespace kvscope::ui
