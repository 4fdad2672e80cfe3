#include "widgets/layer_labels.h"

#include <QBarCategoryAxis>
#include <QCategoryAxis>
#include <QStringList>

namespace kvscope::ui {

int layer_label_step(qsizetype n_layers) {
  return n_layers <= 20 ? 1 : n_layers <= 100 ? 5 : 10;
}

void set_layer_axes(QBarCategoryAxis* bars, QCategoryAxis* labels, qsizetype n_layers) {
  QStringList names;
  for (qsizetype i = 0; i < n_layers; ++i) names << QString::number(i);
  bars->setCategories(names);
  bars->setLabelsVisible(false);
  for (const QString& old : labels->categoriesLabels()) labels->remove(old);
  labels->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  labels->setRange(-0.5, static_cast<double>(n_layers) - 0.5);
  labels->setStartValue(-0.5);
  const int step = layer_label_step(n_layers);
  for (qsizetype i = 0; i < n_layers; i += step) {
    labels->append(QString::number(i), static_cast<double>(i));
  }
}

}  // namespace kvscope::ui
