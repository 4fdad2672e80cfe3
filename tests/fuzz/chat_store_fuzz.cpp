// libFuzzer harness: the saved chats' database (ui/chat/chat_store.h) as the input bytes.
// Each input is written as the store's file in a scratch folder, opened (read-write, or
// read-only where it decides so), its chats loaded, the next id read and every chat it could
// not read exported as stored. SQLite answers a damaged file with an error; the store must
// turn every one into a problem line or a refused open: a crash, a sanitizer report, an
// exception or a unit over run.sh's time and memory budget is a finding.
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QObject>
#include <QStringList>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "chat/chat_store.h"
#include "chat/session.h"

namespace {

QString scratch_path() {
  static const QString path = [] {
    QByteArray dir = QDir::tempPath().toUtf8() + "/kvscope-chat-fuzz-XXXXXX";
    if (!::mkdtemp(dir.data())) std::abort();
    return QString::fromUtf8(dir) + QStringLiteral("/chats.sqlite");
  }();
  return path;
}

void remove_files(const QString& path) {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
    QFile::remove(path + QLatin1String(suffix));
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  // Qt SQL finds its SQLite driver through the application's plugin paths.
  static QCoreApplication app(*argc, *argv);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using kvscope::ui::ChatStore;
  const QString path = scratch_path();
  remove_files(path);
  {
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly)) std::abort();
    file.write(reinterpret_cast<const char*>(data), static_cast<qint64>(size));
  }
  QString error;
  if (std::unique_ptr<ChatStore> store = ChatStore::open(path, &error)) {
    QObject owner;  // owns the sessions load() makes
    QStringList problems;
    (void)store->load(&owner, &problems);
    (void)store->next_id();
    for (const auto& [id, chat] : store->unreadable()) (void)store->rawChatJson(id, &error);
  } else if (error.isEmpty()) {
    std::abort();  // a refusal always says why
  }
  remove_files(path);
  return 0;
}
