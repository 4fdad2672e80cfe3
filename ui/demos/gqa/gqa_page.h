// GqaDemoPage: how grouped-query attention shrinks the KV cache, for a chosen model (a
// preset, or the loaded model). A diagram joins the query heads to the KV heads they read
// (as the model is, or as MHA / GQA / MQA); a table gives, for each layout, the KV bytes
// per token per layer (kv_bytes_per_token_per_layer) and over all layers, the KV of one
// full-context sequence and the longest context a chosen KV memory budget holds (the
// planner's max_context); a chart compares the per-token bytes.
#pragma once

#include <QWidget>

#include <array>
#include <optional>

#include "plan/kv_capacity.h"
#include "worker/engine_messages.h"

class QBarSet;
class QBarSeries;
class QBarCategoryAxis;
class QButtonGroup;
class QChartView;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QTableWidget;
class QValueAxis;

namespace kvscope::ui {

class DemoModelChooser;
class GqaDiagram;

class GqaDemoPage : public QWidget {
  Q_OBJECT

 public:
  // Table rows and diagram choices, in this order.
  enum Layout { kMha = 0, kGqa = 1, kMqa = 2 };

  explicit GqaDemoPage(QWidget* parent = nullptr);

  void setLoadedModel(const std::optional<kvscope::ui::ModelInfo>& info);

  DemoModelChooser* modelChooser() const { return chooser_; }
  GqaDiagram* diagram() const { return diagram_; }
  QTableWidget* table() const { return table_; }
  QBarSet* bytesSet() const { return bytes_set_; }
  // The KV heads of a layout for the chosen model (0: the layout does not exist).
  std::int64_t layoutKvHeads(int layout) const;

 protected:
  void changeEvent(QEvent* event) override;

 private:
  QWidget* build_controls();
  QWidget* build_chart();
  void refresh();
  void describe_model(const ModelSpec& spec, std::int64_t kv_budget_bytes);
  void show_per_token(const std::array<double, 3>& per_token, std::int64_t n_layers, KvDtype dtype);
  void fill_row(int row, const std::optional<KvCapacity>& c, const KvCapacity& model);
  void show_diagram();
  void restyle();

  DemoModelChooser* chooser_;
  QLabel* shape_;
  QButtonGroup* layouts_;
  QComboBox* dtype_;
  QDoubleSpinBox* budget_gib_;
  QLabel* notice_;
  GqaDiagram* diagram_;
  QTableWidget* table_;
  QLabel* table_note_;
  QChartView* chart_;
  QBarSeries* bars_;
  QBarSet* bytes_set_;
  QBarCategoryAxis* layout_axis_;
  QValueAxis* bytes_axis_;
  std::array<std::int64_t, 3> kv_heads_{};
};

}  // namespace kvscope::ui
