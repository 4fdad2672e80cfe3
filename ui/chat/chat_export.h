// A chat as a file: Markdown to read or share (the model, the sampling settings, and each
// reply's tokens and tokens/s under its heading) and JSON with every saved field. Both are
// written from the ChatSession as it is; a reply still streaming is left out.
#pragma once

#include <QByteArray>
#include <QString>

namespace kvscope::ui {

class ChatSession;

QString chat_markdown(const ChatSession& chat);
QByteArray chat_json(const ChatSession& chat);

}  // namespace kvscope::ui
