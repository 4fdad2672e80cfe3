// BlockMapWidget's legend (block_map_widget.h): the owners of blocks and the key of what a
// cell's drawing means, laid out along the bottom line.
#include <QPainter>

#include <algorithm>
#include <map>
#include <utility>

#include "panel/block_map_widget.h"

namespace kvscope::ui {

// `e`'s text in `width`: a chat's entry too wide for its share keeps the chat's name, shortened
// at its end, and leaves out its sequences (the tooltip of each block names them): cutting the
// middle out of "Tell me a long story (sequence 2)" left "Tell me…ence 2)".
QString BlockMapWidget::elided_legend_text(const LegendItem& e, const QFontMetrics& fm, int width) {
  if (fm.horizontalAdvance(e.text) <= width) return e.text;
  return fm.elidedText(e.name.isEmpty() ? e.text : e.name, Qt::ElideRight, width);
}

// A chat's entry: its name and its sequences ("2, 3" after a regenerated reply: both are the
// chat's colour).
BlockMapWidget::LegendItem BlockMapWidget::chat_legend_item(ChatId chat,
                                                            const std::vector<SeqId>& seqs) const {
  LegendItem e{{1, 0, 1, seqs.front(), 1.0, 0}, owner_name(seqs.front()), {}, {}, {}};
  const auto name = names_.find(chat);
  if (name != names_.end()) e.name = name->second;
  if (seqs.size() > 1) {
    QStringList ids;
    for (const SeqId s : seqs) ids << QString::number(s);
    const QString list = ids.join(QStringLiteral(", "));
    e.text = name != names_.end() ? tr("%1 (sequences %2)").arg(name->second, list)
                                  : tr("chat %1 (sequences %2)").arg(chat).arg(list);
  }
  return e;
}

// The legend: every owner of blocks (chats, then API requests in request order), each name
// elided to an equal share of what the key (shared, partly filled, f16 copy, free) leaves;
// when the shares would be too narrow to read, as many owners as fit and "+N more".
std::vector<BlockMapWidget::LegendItem> BlockMapWidget::legend_items() const {
  const auto item = [](CellState state, QString text) {
    return LegendItem{state, std::move(text), QRect(), QRect(), QString()};
  };
  std::vector<std::pair<ChatId, std::vector<SeqId>>> chats;  // in the order of their first seq
  for (const auto& [seq, chat] : owners_) {
    const auto same = [chat = chat](const auto& c) { return c.first == chat; };
    auto it = std::find_if(chats.begin(), chats.end(), same);
    if (it == chats.end()) it = chats.insert(chats.end(), {chat, {}});
    it->second.push_back(seq);
  }
  std::vector<LegendItem> owners;
  for (const auto& [chat, seqs] : chats) owners.push_back(chat_legend_item(chat, seqs));
  std::map<std::int64_t, SeqId> by_request;
  for (const auto& [seq, n] : api_) by_request.emplace(n, seq);
  for (const auto& [n, seq] : by_request) {
    owners.push_back(item({1, 0, 1, seq, 1.0, 0}, tr("API #%1").arg(n)));
  }
  const SeqId any = owners_.empty() ? -1 : owners_.begin()->first;
  std::vector<LegendItem> key;
  key.push_back(item({1, 1, 1, any, 1.0, 0}, tr("shared")));
  key.push_back(item({1, 0, 1, any, 0.4, 0}, tr("partly filled")));
  const bool exact_tail =
      std::any_of(groups_.begin(), groups_.end(),
                  [](const LayerGroupSnapshot& g) { return g.exact_copies > 0; });
  if (exact_tail) key.push_back(item({1, 0, 1, any, 1.0, 1}, tr("f16 copy")));
  key.push_back(item({0, 0, 1, -1, 0.0, 0}, tr("free")));

  const QFontMetrics fm = fontMetrics();
  const int box = std::min(12, legend_.height() - 2);
  const int gap = box + 4 + 14;  // a cell, its padding and the space before the next entry
  int key_width = 0;
  for (const LegendItem& e : key) key_width += gap + fm.horizontalAdvance(e.text);
  const int owner_space = std::max(0, legend_.width() - key_width);
  constexpr int kMinName = 60;  // px: narrower than this, a name no longer reads
  const auto n_owners = static_cast<int>(owners.size());
  int shown = n_owners;
  int more_w = 0;
  if (n_owners > 0 && owner_space / n_owners < gap + kMinName) {
    more_w = fm.horizontalAdvance(tr("+%1 more").arg(n_owners)) + 14;
    shown = std::clamp((owner_space - more_w) / (gap + kMinName), 0, n_owners);
  }
  const int share = shown > 0 ? (owner_space - more_w) / shown : 0;
  std::vector<LegendItem> out;
  int x = legend_.left();
  auto place = [&](LegendItem e, int text_w, bool cell) {
    e.text = elided_legend_text(e, fm, text_w);
    e.cell = cell ? QRect(x, legend_.center().y() - box / 2, box, box) : QRect();
    const int text_x = cell ? x + box + 4 : x;
    e.text_rect = QRect(text_x, legend_.top(), text_w + 1, legend_.height());
    x = text_x + text_w + 14;
    out.push_back(std::move(e));
  };
  for (int i = 0; i < shown; ++i) {
    const LegendItem& e = owners[static_cast<std::size_t>(i)];
    place(e, std::min(fm.horizontalAdvance(e.text), share - gap), true);
  }
  if (shown < n_owners) {
    const QString more = tr("+%1 more").arg(n_owners - shown);
    place(item({}, more), fm.horizontalAdvance(more), false);
  }
  for (const LegendItem& e : key) {
    const int w = fm.horizontalAdvance(e.text);
    if (x + box + 4 + w > legend_.right()) break;
    place(e, w, true);
  }
  return out;
}

QStringList BlockMapWidget::legendTexts() const {
  QStringList texts;
  for (const LegendItem& e : legend_items()) texts << e.text;
  return texts;
}

void BlockMapWidget::paint_legend(QPainter& p) const {
  for (const LegendItem& e : legend_items()) {
    if (!e.cell.isNull()) paint_cell(p, e.cell, e.state);
    p.setPen(palette().color(QPalette::Text));
    p.drawText(e.text_rect, Qt::AlignLeft | Qt::AlignVCenter, e.text);
  }
}

}  // namespace kvscope::ui
