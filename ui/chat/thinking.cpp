#include "chat/thinking.h"

#include <algorithm>

namespace kvscope::ui {

namespace {

const QLatin1String kOpenTag("<think>");
const QLatin1String kCloseTag("</think>");

// The length of the longest proper start of `tag` that `text` ends with (0: none).
qsizetype trailing_tag_start(const QString& text, QLatin1String tag) {
  for (qsizetype n = std::min(text.size(), tag.size() - 1); n > 0; --n) {
    if (text.endsWith(tag.first(n))) return n;
  }
  return 0;
}

qsizetype first_non_space(const QString& text, qsizetype from) {
  while (from < text.size() && text.at(from).isSpace()) ++from;
  return from;
}

}  // namespace

ReplyThinking split_thinking(const QString& reply) {
  ReplyThinking r;
  const qsizetype start = first_non_space(reply, 0);
  if (!QStringView(reply).sliced(start).startsWith(kOpenTag)) {
    r.answer = reply;
    return r;
  }
  const qsizetype body = start + kOpenTag.size();
  const qsizetype close = reply.indexOf(kCloseTag, body);
  if (close < 0) {
    r.section = ReplyThinking::Section::Open;
    QString reasoning = reply.sliced(body);
    reasoning.chop(trailing_tag_start(reasoning, kCloseTag));
    r.reasoning = reasoning.trimmed();
    return r;
  }
  r.section = ReplyThinking::Section::Closed;
  r.reasoning = reply.sliced(body, close - body).trimmed();
  r.answer = reply.sliced(first_non_space(reply, close + kCloseTag.size()));
  return r;
}

}  // namespace kvscope::ui
