// QuantChartPanel: the frame of the quantization demo's charts: a chart view styled like
// the live panel's (chart_style.h) with the app's wrapping legend under it, restyled
// whenever the palette changes (light / dark).
#pragma once

#include <QWidget>

class QChart;
class QChartView;

namespace kvscope::ui {

class ChartLegend;

class QuantChartPanel : public QWidget {
  Q_OBJECT

 public:
  explicit QuantChartPanel(QWidget* parent = nullptr);

 protected:
  QChart* chart() const;
  ChartLegend* legend() const { return legend_; }
  // Colours and fonts from the palette: style_chart() here, the series' own in overrides
  // (which call this one). Subclasses call it at the end of their constructor.
  virtual void restyle();
  void changeEvent(QEvent* event) override;

 private:
  QChartView* view_;
  ChartLegend* legend_;
};

}  // namespace kvscope::ui
