// Reasoning models (Qwen 3, DeepSeek-R1's distills) begin a reply with
// "<think>\n...reasoning...\n</think>\n\n" and then give the answer. The stored reply keeps
// every character: it goes back to the model as history as generated, and into saved chats
// and exports. Only the chat view splits it, to show the reasoning in a collapsed
// "Thinking" section above the answer, and never the tags themselves.
#pragma once

#include <QString>

namespace kvscope::ui {

struct ReplyThinking {
  enum class Section {
    None,    // the reply does not begin with <think>
    Open,    // no </think> yet: still streaming, or cut short (stopped, length limit)
    Closed,  // </think> came; the answer follows it
  };
  Section section = Section::None;
  QString reasoning;  // between the tags, without the whitespace around it
  QString answer;     // after </think>, without leading whitespace; the whole reply for None

  // Whether the view shows a section: an open one (the model is thinking), or a closed one
  // with reasoning in it. Qwen 3 with thinking off emits "<think>\n\n</think>\n\n": none.
  bool shown() const {
    return section == Section::Open || (section == Section::Closed && !reasoning.isEmpty());
  }
};

// Splits a reply (whole or streamed so far). A reply is a thinking one only when <think> is
// its first text after whitespace; a <think> further on is the answer's text. While the
// section is open, a trailing start of "</think>" ("</thi") is left out of the reasoning: it
// is the closing tag arriving in pieces.
ReplyThinking split_thinking(const QString& reply);

}  // namespace kvscope::ui
