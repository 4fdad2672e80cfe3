#include "fits/fits_page.h"

#include <QFontDatabase>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QScrollBar>
#include <QTabWidget>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextEdit>
#include <QVBoxLayout>

#include "fits/check_view.h"
#include "fits/controls.h"
#include "fits/kv_chart.h"
#include "fits/summary.h"
#include "fits/vllm_section.h"

namespace kvscope::ui {

namespace {

// Writes `text` into `edit`, one block per line. A line too long for the box wraps under
// its own text, four characters further in, so a wrapped formula still reads as one item.
void set_hanging_text(QTextEdit* edit, const QString& text) {
  const qreal space = QFontMetricsF(edit->font()).horizontalAdvance(QLatin1Char(' '));
  QTextDocument* doc = edit->document();
  doc->clear();
  QTextCursor cursor(doc);
  cursor.beginEditBlock();
  const QStringList lines = text.split(QLatin1Char('\n'));
  for (qsizetype i = 0; i < lines.size(); ++i) {
    const QString& line = lines[i];
    qsizetype indent = 0;
    while (indent < line.size() && line[indent] == QLatin1Char(' ')) ++indent;
    QTextBlockFormat f;
    f.setLeftMargin(static_cast<qreal>(indent + 4) * space);
    f.setTextIndent(-static_cast<qreal>(indent + 4) * space);
    if (i == 0) {
      cursor.setBlockFormat(f);
    } else {
      cursor.insertBlock(f);
    }
    cursor.insertText(line);
  }
  cursor.endEditBlock();
}

}  // namespace

FitsPage::FitsPage(QWidget* parent) : QWidget(parent) {
  const FitsCatalogue catalogue = load_fits_catalogue();
  catalogue_error_ = catalogue.error;
  controls_ = new FitsControls(catalogue, this);
  summary_ = new FitsSummary(this);
  chart_ = new FitsKvChart(this);
  formula_ = new QTextEdit(this);
  check_ = new FitsCheckView(this);
  vllm_ = new FitsVllmSection(this);
  tabs_ = new QTabWidget(this);

  formula_->setReadOnly(true);
  formula_->setLineWrapMode(QTextEdit::WidgetWidth);
  formula_->setAcceptRichText(false);
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setPointSizeF(font().pointSizeF() * 0.9);
  formula_->setFont(mono);
  auto* formula_box = new QGroupBox(tr("The plan, written out"), this);
  auto* formula_layout = new QVBoxLayout(formula_box);
  formula_layout->setContentsMargins(4, 4, 4, 4);
  formula_layout->addWidget(formula_);

  auto* left = new QWidget(this);
  auto* left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 4, 0);
  left_layout->addWidget(controls_);
  left_layout->addSpacing(12);
  left_layout->addWidget(check_);
  left_layout->addStretch(1);
  left->setFixedWidth(380);

  // Halves, whatever the parts' size hints.
  auto* single = new QWidget(tabs_);
  auto* bottom = new QHBoxLayout(single);
  bottom->setContentsMargins(4, 4, 4, 4);
  bottom->setSpacing(8);
  bottom->addWidget(chart_, 1);
  bottom->addWidget(formula_box, 1);
  tabs_->addTab(single, tr("One GPU: KV cache and formulas"));
  tabs_->addTab(vllm_, tr("Serve with vLLM"));
  auto* right = new QVBoxLayout;
  right->setSpacing(8);
  right->addWidget(summary_);
  right->addWidget(tabs_, 1);
  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(8, 8, 8, 8);
  layout->setSpacing(12);
  layout->addWidget(left);
  layout->addLayout(right, 1);

  connect(controls_, &FitsControls::changed, this, &FitsPage::recompute);
  connect(check_, &FitsCheckView::checkRequested, this, &FitsPage::checkRequested);
  recompute();
}

void FitsPage::setLoadedModel(const std::optional<ModelInfo>& info) {
  controls_->setLoadedModel(info);
  check_->setModelLoaded(info.has_value());
}

void FitsPage::showPlanCheck(const PlanCheck& check) {
  check_->showCheck(check);
}

void FitsPage::showPlanCheckError(const QString& message) {
  check_->showError(message);
}

void FitsPage::recompute() {
  const FitsInputs inputs = controls_->inputs();
  if (controls_->hasModel()) {
    answers_ = answer_fits(inputs);
  } else {
    answers_ = {};
    answers_.error = tr("no model to plan (%1)").arg(catalogue_error_).toStdString();
  }
  summary_->setAnswers(answers_, inputs.memory_bytes);
  controls_->showPlannedGpuLayers(answers_.split ? answers_.split->gpu_layers : -1);
  vllm_->setInputs(inputs, controls_->servedModelName());
  std::vector<KvCurve> curves;
  if (answers_.ok()) curves = kv_curves(answers_.request, kCurvePoints);
  chart_->setCurves(curves, answers_.plan.kv_budget_bytes, answers_.request.context);
  // Keep the reader's place in the text while a slider moves (the edit's own cursor, which
  // the new text pushed to the end, goes back to the top so it does not scroll there).
  const int scroll = formula_->verticalScrollBar()->value();
  set_hanging_text(formula_, QString::fromStdString(answers_.formula));
  formula_->moveCursor(QTextCursor::Start);
  formula_->verticalScrollBar()->setValue(scroll);
}

}  // namespace kvscope::ui
