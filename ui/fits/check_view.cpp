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
  const QStringList rows = {tr("KV pool"),     tr("KV in use"),   tr("tokens"),
                            tr("GPU layers"),  tr("GPU weights"), tr("GPU KV pool"),
                            tr("CPU weights"), tr("CPU KV pool")};
  for (int r = 0; r < kRows; ++r) {
    row_labels_[static_cast<std::size_t>(r)] = new QLabel(rows[r], this);
    grid->addWidget(row_labels_[static_cast<std::size_t>(r)], r + 1, 0);
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
  show_split(std::nullopt);
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

// Each side's rows of a split: the planner's beside what that side's backend holds.
void FitsCheckView::show_split(const std::optional<SplitCheck>& split) {
  split_shown_ = split.has_value();
  for (int r = kFirstSplitRow; r < kRows; ++r) {
    row_labels_[static_cast<std::size_t>(r)]->setVisible(split_shown_);
    for (int c = 0; c < kColumns; ++c) {
      cells_[static_cast<std::size_t>(r * kColumns + c)]->setVisible(split_shown_);
    }
  }
  if (!split) return;
  cell(GpuLayers, Predicted)->setText(count_text(split->plan.gpu_layers));
  cell(GpuLayers, Allocated)->setText(count_text(split->gpu_layers));
  const auto side = [this](Row weights, Row pool, const SplitSideCheck& s) {
    set_bytes(cell(weights, Predicted), s.predicted_weights);
    set_bytes(cell(weights, Allocated), s.allocated_weights);
    set_bytes(cell(pool, Predicted), s.predicted_pool_bytes);
    set_bytes(cell(pool, Allocated), s.allocated_pool_bytes);
  };
  side(GpuWeights, GpuPool, split->gpu);
  side(CpuWeights, CpuPool, split->cpu);
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
  show_split(check.split);
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
