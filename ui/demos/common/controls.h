// What the demo pages share: their frame (an introduction over a column of controls beside
// the content), and the GQA and KV quantization demos' model chooser and KV budget.
//
// DemoModelChooser: the model the GQA and KV quantization demos describe. It lists the
// loaded model first (when there is one) and then the presets shipped with the app
// (load_fits_catalogue(): share/kvscope/presets/models.json beside the binary); a missing
// catalogue leaves only the loaded model and catalogueError() says why.
#pragma once

#include <QList>
#include <QString>

#include <cstdint>
#include <optional>
#include <vector>

#include "model/model_spec.h"
#include "widgets/eliding_combo_box.h"
#include "worker/engine_messages.h"

class QDoubleSpinBox;
class QLabel;
class QLayout;

namespace kvscope::ui {

// Lays `page` out: the introduction (rich text, wrapped) across the top, `controls` on the
// left and `content` taking the rest.
void set_demo_layout(QWidget* page, const QString& intro, QWidget* controls, QLayout* content);

// The left column of a demo page: `boxes` one under the other at a fixed width, then,
// when `notice` is given, a word-wrapped label (object name "notice") for what went wrong.
QWidget* make_controls_column(QWidget* parent, const QList<QWidget*>& boxes,
                              QLabel** notice = nullptr);

// The "KV memory budget" spin box (GiB, 0.01 .. 4096, default 8; object name
// "kvBudgetGiB"), and its value in bytes.
QDoubleSpinBox* make_kv_budget_spin(QWidget* parent);
std::int64_t kv_budget_bytes(const QDoubleSpinBox* spin);

class DemoModelChooser : public ElidingComboBox {
  Q_OBJECT

 public:
  explicit DemoModelChooser(QWidget* parent = nullptr);

  // Adds (or replaces) the loaded model as the first entry and selects it; nullopt
  // removes it and selects the first preset.
  void setLoadedModel(const std::optional<ModelInfo>& info);
  bool hasLoadedModel() const { return loaded_; }

  bool hasModels() const { return !entries_.empty(); }
  // The chosen model's shape (call only when hasModels()).
  const ModelSpec& currentSpec() const;
  QString currentName() const;
  // Selects the preset with this slug; false when there is none.
  bool selectPreset(const QString& slug);
  QString catalogueError() const { return error_; }

 signals:
  void modelChanged();

 private:
  struct Entry {
    QString name;
    QString slug;  // empty for the loaded model
    ModelSpec spec;
  };

  void rebuild_items(int select);

  std::vector<Entry> entries_;  // same order as the items
  bool loaded_ = false;
  QString error_;
};

}  // namespace kvscope::ui
