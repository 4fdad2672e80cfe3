#include "fits/check_view.h"

#include <QGridLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

#include "widgets/number_text.h"
#include "worker/engine_messages.h"

namespace kvscope::ui {

namespace {

// "160.0 KiB" with the exact count in the tooltip: agreement is to the byte.
void set_bytes(QLabel* label, std::int64_t bytes) {
  label->setText(bytes_text(bytes));
  label->setToolTip(QObject::tr("%1 bytes").arg(count_text(bytes)));
}

}  // namespace

FitsCheckView::FitsCheckView(QWidget* parent)
    : QGroupBox(tr("Check against the engine"), parent),
      button_(new QPushButton(tr("Fill the cache to the planned maximum"), this)),
      status_(new QLabel(this)) {
  auto* about = new QLabel(
      tr("Grows one sequence of the loaded model to the longest context the plan predicts, "
         "on its backend, and compares the bytes."),
      this);
  about->setWordWrap(true);
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* grid = new QGridLayout;
  grid->setHorizontalSpacing(12);
  grid->addWidget(new QLabel(tr("<b>predicted</b>"), this), 0, 1);
  grid->addWidget(new QLabel(tr("<b>allocated</b>"), this), 0, 2);
  const QStringList rows = {tr("KV pool"), tr("KV in use"), tr("tokens")};
  for (int r = 0; r < kRows; ++r) {
    grid->addWidget(new QLabel(rows[r], this), r + 1, 0);
    for (int c = 0; c < kColumns; ++c) {
      auto* cell = new QLabel(this);
      cell->setTextInteractionFlags(Qt::TextSelectableByMouse);
      cells_[static_cast<std::size_t>(r * kColumns + c)] = cell;
      grid->addWidget(cell, r + 1, c + 1);
    }
  }
  grid->setColumnStretch(1, 1);
  grid->setColumnStretch(2, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(about);
  layout->addWidget(button_);
  layout->addLayout(grid);
  layout->addWidget(status_);
  connect(button_, &QPushButton::clicked, this, [this] {
    button_->setEnabled(false);  // one check at a time; the answer enables it again
    clear_cells();
    status_->setText(tr("Filling the cache\u2026"));
    emit checkRequested();
  });
  setModelLoaded(false);
}

QLabel* FitsCheckView::cell(Row row, Column column) const {
  return cells_[static_cast<std::size_t>(static_cast<int>(row) * kColumns +
                                         static_cast<int>(column))];
}

void FitsCheckView::clear_cells() {
  for (QLabel* c : cells_) {
    c->clear();
    c->setToolTip({});
  }
}

void FitsCheckView::setModelLoaded(bool loaded) {
  loaded_ = loaded;
  button_->setEnabled(loaded);
  clear_cells();
  status_->setText(loaded ? QString() : tr("Load a model to check the plan against the engine."));
}

void FitsCheckView::showCheck(const PlanCheck& check) {
  button_->setEnabled(loaded_);
  set_bytes(cell(Pool, Predicted), check.predicted_pool_bytes);
  set_bytes(cell(Pool, Allocated), check.allocated_pool_bytes);
  set_bytes(cell(Used, Predicted), check.predicted_used_bytes);
  set_bytes(cell(Used, Allocated), check.allocated_used_bytes);
  cell(Tokens, Predicted)->setText(count_text(check.planned_max_context));
  cell(Tokens, Allocated)->setText(count_text(check.reached_tokens));
  const QString next = check.next_token_refused ? tr("the next token was refused")
                                                : tr("the next token was still accepted");
  if (check.agrees()) {
    status_->setText(
        tr("\u2714 Agrees to the byte on %1; %2.").arg(device_label(check.memory.device), next));
  } else {
    status_->setText(tr("\u2718 Differs on %1; %2.").arg(device_label(check.memory.device), next));
  }
}

void FitsCheckView::showError(const QString& message) {
  button_->setEnabled(loaded_);
  clear_cells();
  status_->setText(tr("Check failed: %1").arg(message));
}

}  // namespace kvscope::ui
