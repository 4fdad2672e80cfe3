// TimeChart: one chart of the Remote page, value over seconds since connecting, in the
// app's chart frame and style. Each line has a name and a unit for the legend, which shows
// the newest value ("running 24"); a dashed line is a prediction (the planner's).
#pragma once

#include <QList>
#include <QPointF>
#include <QString>
#include <QVector>

#include "widgets/chart_frame.h"

class QLineSeries;
class QValueAxis;

namespace kvscope::ui {

struct TimeLine {
  QString name;
  QString unit;  // appended to the legend's value: "%", " ms", "/s", ""
  int decimals = 0;
  bool dashed = false;
};

class TimeChart : public ChartFrame {
  Q_OBJECT

 public:
  // `y_max` > 0 fixes the y range to [0, y_max] (percentages); 0 fits the data.
  TimeChart(const QString& title, QVector<TimeLine> lines, double y_max, QWidget* parent = nullptr);

  // One replace() per line; `points[i]` for line i (may be empty), x in seconds over
  // [x_from, x_to] (every chart of a page shows the same span; at least 10 s).
  void setPoints(const QVector<QList<QPointF>>& points, double x_from, double x_to);
  void clear();
  // Hides a line and its legend entry (the planner's, while no model is chosen).
  void setLineShown(int line, bool shown);

  QLineSeries* series(int line) const { return series_[line]; }
  int lineCount() const { return static_cast<int>(series_.size()); }

 protected:
  void restyle() override;

 private:
  void update_legend(const QVector<QList<QPointF>>& points);

  QVector<TimeLine> lines_;
  QVector<bool> shown_;
  QVector<QLineSeries*> series_;
  QValueAxis* x_;
  QValueAxis* y_;
  double y_max_;
};

}  // namespace kvscope::ui
