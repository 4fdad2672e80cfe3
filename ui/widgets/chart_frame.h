// ChartFrame: the base of every chart widget: a chart view styled like the live panel's
// (chart_style.h, Qt's own legend hidden) over the app's wrapping legend, restyled whenever
// the palette changes (light / dark). Subclasses add series and axes to chart() and
// colour them in restyle(). Every chart's context menu saves it as PNG or SVG (the view
// and its legend, at the widget's size) and its series as CSV (widgets/export_file.h).
#pragma once

#include <QWidget>

class QChart;
class QChartView;
class QVBoxLayout;

namespace kvscope::ui {

class ChartLegend;

class ChartFrame : public QWidget {
  Q_OBJECT

 public:
  explicit ChartFrame(QWidget* parent = nullptr);

  // One row per point: "series,x,y" (a bar set's x is its category, or the index).
  QString seriesCsv() const;
  // The file name exports suggest: the chart's title, else the widget's object name or class.
  QString exportName() const;
  QString savePng(const QString& path);  // "" or what went wrong
  QString saveSvg(const QString& path);
  QString saveCsv(const QString& path) const;

 protected:
  QChart* chart() const;
  QChartView* view() const { return view_; }
  ChartLegend* legend() const { return legend_; }
  // The margin-free column of view over legend, for widgets that add rows.
  QVBoxLayout* column() const { return column_; }
  // Colours and fonts from the palette: style_chart() here, the series' own in overrides
  // (which call this one). Subclasses call it at the end of their constructor.
  virtual void restyle();
  void changeEvent(QEvent* event) override;

 private:
  QChartView* view_;
  ChartLegend* legend_;
  QVBoxLayout* column_;
};

}  // namespace kvscope::ui
