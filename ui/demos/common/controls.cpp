#include "demos/common/controls.h"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <cmath>

#include "fits/catalogue.h"

namespace kvscope::ui {

namespace {

constexpr int kControlsWidth = 300;

}  // namespace

void set_demo_layout(QWidget* page, const QString& intro, QWidget* controls, QLayout* content) {
  auto* text = new QLabel(intro, page);
  text->setWordWrap(true);
  auto* body = new QHBoxLayout;
  body->addWidget(controls);
  body->addLayout(content, 1);
  auto* layout = new QVBoxLayout(page);
  layout->addWidget(text);
  layout->addLayout(body, 1);
}

QWidget* make_controls_column(QWidget* parent, const QList<QWidget*>& boxes, QLabel** notice) {
  auto* column = new QWidget(parent);
  column->setFixedWidth(kControlsWidth);
  auto* layout = new QVBoxLayout(column);
  layout->setContentsMargins(0, 0, 0, 0);
  for (QWidget* box : boxes) layout->addWidget(box);
  if (notice) {
    *notice = new QLabel(column);
    (*notice)->setObjectName(QStringLiteral("notice"));
    (*notice)->setWordWrap(true);
    layout->addWidget(*notice);
  }
  layout->addStretch(1);
  return column;
}

QDoubleSpinBox* make_kv_budget_spin(QWidget* parent) {
  auto* spin = new QDoubleSpinBox(parent);
  spin->setObjectName(QStringLiteral("kvBudgetGiB"));
  spin->setRange(0.01, 4096.0);
  spin->setDecimals(2);
  spin->setValue(8.0);
  spin->setSuffix(QObject::tr(" GiB"));
  spin->setToolTip(QObject::tr("Memory the KV cache may take (weights and workspace not counted)"));
  return spin;
}

std::int64_t kv_budget_bytes(const QDoubleSpinBox* spin) {
  return std::llround(spin->value() * static_cast<double>(std::int64_t{1} << 30));
}

DemoModelChooser::DemoModelChooser(QWidget* parent) : ElidingComboBox(parent) {
  FitsCatalogue catalogue = load_fits_catalogue();
  error_ = catalogue.models.empty() ? catalogue.error : QString();
  for (const ModelPreset& p : catalogue.models) {
    entries_.push_back({QString::fromStdString(p.name), QString::fromStdString(p.slug), p.spec});
  }
  setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  setMinimumContentsLength(16);
  rebuild_items(0);
  selectPreset(QStringLiteral("llama-3-8b"));
  connect(this, &QComboBox::currentIndexChanged, this, &DemoModelChooser::modelChanged);
}

void DemoModelChooser::setLoadedModel(const std::optional<ModelInfo>& info) {
  if (!info && !loaded_) return;  // nothing was loaded: keep the user's choice
  if (loaded_) entries_.erase(entries_.begin());
  loaded_ = info.has_value();
  if (loaded_) {
    entries_.insert(entries_.begin(), {tr("Loaded: %1").arg(info->name), QString(), info->spec});
  }
  rebuild_items(0);
  emit modelChanged();
}

void DemoModelChooser::rebuild_items(int select) {
  const QSignalBlocker block(this);
  clear();
  for (const Entry& e : entries_) addItem(e.name);
  setCurrentIndex(entries_.empty() ? -1 : select);
}

const ModelSpec& DemoModelChooser::currentSpec() const {
  return entries_.at(static_cast<std::size_t>(std::max(0, currentIndex()))).spec;
}

QString DemoModelChooser::currentName() const {
  return hasModels() ? entries_.at(static_cast<std::size_t>(std::max(0, currentIndex()))).name
                     : QString();
}

bool DemoModelChooser::selectPreset(const QString& slug) {
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (!entries_[i].slug.isEmpty() && entries_[i].slug == slug) {
      setCurrentIndex(static_cast<int>(i));
      return true;
    }
  }
  return false;
}

}  // namespace kvscope::ui
