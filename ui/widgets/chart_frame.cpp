#include "widgets/chart_frame.h"

#include <QAbstractBarSeries>
#include <QAction>
#include <QAreaSeries>
#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChartView>
#include <QEvent>
#include <QLegend>
#include <QLineSeries>
#include <QRegularExpression>
#include <QVBoxLayout>
#include <QXYSeries>

#include "widgets/chart_legend.h"
#include "widgets/chart_style.h"
#include "widgets/export_file.h"

namespace kvscope::ui {
namespace {

QString csv_field(const QString& s) {
  if (!s.contains(QLatin1Char(',')) && !s.contains(QLatin1Char('"')) &&
      !s.contains(QLatin1Char('\n'))) {
    return s;
  }
  return QLatin1Char('"') + QString(s).replace(QLatin1Char('"'), QStringLiteral("\"\"")) +
         QLatin1Char('"');
}

void xy_rows(QString& csv, const QString& name, const QXYSeries& series) {
  for (const QPointF& p : series.points()) {
    csv += QStringLiteral("%1,%2,%3\n")
               .arg(csv_field(name))
               .arg(p.x(), 0, 'g', 10)
               .arg(p.y(), 0, 'g', 10);
  }
}

// A bar series' categories: from the category axis attached to it, if any.
QStringList categories_of(QAbstractSeries* series) {
  for (QAbstractAxis* axis : series->attachedAxes()) {
    if (auto* c = qobject_cast<QBarCategoryAxis*>(axis)) return c->categories();
  }
  return {};
}

}  // namespace

ChartFrame::ChartFrame(QWidget* parent)
    : QWidget(parent),
      view_(new QChartView(new QChart, this)),
      legend_(new ChartLegend(this)),
      column_(new QVBoxLayout(this)) {
  setup_chart_view(view_);
  view_->chart()->legend()->hide();  // legend_ replaces it: Qt's would elide every name
  column_->setContentsMargins(0, 0, 0, 0);
  column_->setSpacing(0);
  column_->addWidget(view_, 1);
  column_->addWidget(legend_);

  auto add = [this](const char* name, const QString& text, auto save, const QString& filter,
                    const QString& ext) {
    auto* action = new QAction(text, this);
    action->setObjectName(QLatin1String(name));
    connect(action, &QAction::triggered, this, [this, text, save, filter, ext] {
      export_with_dialog(this, text, exportName() + ext, filter,
                         [this, save](const QString& path) { return (this->*save)(path); });
    });
    view_->addAction(action);
  };
  add("exportPng", tr("Save chart as PNG\u2026"), &ChartFrame::savePng, tr("PNG image (*.png)"),
      QStringLiteral(".png"));
  add("exportSvg", tr("Save chart as SVG\u2026"), &ChartFrame::saveSvg, tr("SVG drawing (*.svg)"),
      QStringLiteral(".svg"));
  add("exportCsv", tr("Save data as CSV\u2026"), &ChartFrame::saveCsv, tr("CSV table (*.csv)"),
      QStringLiteral(".csv"));
  view_->setContextMenuPolicy(Qt::ActionsContextMenu);
}

QString ChartFrame::seriesCsv() const {
  QString csv = QStringLiteral("series,x,y\n");
  for (QAbstractSeries* series : view_->chart()->series()) {
    if (auto* xy = qobject_cast<QXYSeries*>(series)) {
      xy_rows(csv, xy->name(), *xy);
    } else if (auto* area = qobject_cast<QAreaSeries*>(series)) {
      if (area->upperSeries()) xy_rows(csv, area->name(), *area->upperSeries());
    } else if (auto* bars = qobject_cast<QAbstractBarSeries*>(series)) {
      const QStringList categories = categories_of(bars);
      for (QBarSet* set : bars->barSets()) {
        for (int i = 0; i < set->count(); ++i) {
          const QString x = i < categories.size() ? categories[i] : QString::number(i);
          csv += QStringLiteral("%1,%2,%3\n")
                     .arg(csv_field(set->label()), csv_field(x))
                     .arg(set->at(i), 0, 'g', 10);
        }
      }
    }
  }
  return csv;
}

QString ChartFrame::exportName() const {
  QString name = view_->chart()->title();  // rich text: a long title may hold a <br>
  name.remove(QRegularExpression(QStringLiteral("<[^>]*>")));
  if (name.isEmpty()) name = objectName();
  if (name.isEmpty()) name = QString::fromLatin1(metaObject()->className()).section(':', -1);
  name = name.simplified().toLower();
  name.replace(QRegularExpression(QStringLiteral("[^\\w]+")), QStringLiteral("-"));
  return name;
}

QString ChartFrame::savePng(const QString& path) {
  return save_widget_png(this, path);
}

QString ChartFrame::saveSvg(const QString& path) {
  return save_widget_svg(this, path, exportName());
}

QString ChartFrame::saveCsv(const QString& path) const {
  return save_text_file(path, seriesCsv().toUtf8());
}

QChart* ChartFrame::chart() const {
  return view_->chart();
}

void ChartFrame::restyle() {
  style_chart(view_->chart(), palette());
}

void ChartFrame::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) restyle();
}

}  // namespace kvscope::ui
