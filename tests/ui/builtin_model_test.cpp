// The demo model's cache: made once, reused while its checksum matches, made again when it
// is truncated or altered, and written through unique temporary files so two instances
// starting together both end with a whole file and leave nothing behind.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <thread>

#include "worker/builtin_model.h"

namespace kvscope::ui {

class BuiltinModelTest : public QObject {
  Q_OBJECT

 private:
  static QStringList leftovers(const QString& folder) {
    return QDir(folder).entryList({QStringLiteral("*.part")}, QDir::Files);
  }

 private slots:
  void isMadeOnceAndReusedWhileWhole() {
    QTemporaryDir dir;
    const QString path = ensure_builtin_model(dir.path());
    const qint64 size = QFileInfo(path).size();
    QVERIFY(size > 1'000'000);
    QVERIFY(QFileInfo::exists(path + QStringLiteral(".sha256")));
    const QDateTime made = QFileInfo(path).lastModified();
    QTest::qWait(20);
    QCOMPARE(ensure_builtin_model(dir.path()), path);
    QCOMPARE(QFileInfo(path).lastModified(), made);  // not written again
    QVERIFY(leftovers(dir.path()).isEmpty());
  }

  void aTruncatedOrAlteredCacheIsMadeAgain() {
    QTemporaryDir dir;
    const QString path = ensure_builtin_model(dir.path());
    const qint64 size = QFileInfo(path).size();
    QVERIFY(QFile::resize(path, size / 2));
    ensure_builtin_model(dir.path());
    QCOMPARE(QFileInfo(path).size(), size);

    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadWrite));
    f.seek(size - 100);
    f.write("garbage");
    f.close();
    const QByteArray altered = [&] {
      QFile r(path);
      r.open(QIODevice::ReadOnly);
      return r.readAll();
    }();
    ensure_builtin_model(dir.path());
    QFile r(path);
    QVERIFY(r.open(QIODevice::ReadOnly));
    QVERIFY(r.readAll() != altered);
  }

  void twoInstancesStartingTogetherBothGetAWholeFile() {
    QTemporaryDir dir;
    QString a, b;
    std::thread first([&] { a = ensure_builtin_model(dir.path()); });
    std::thread second([&] { b = ensure_builtin_model(dir.path()); });
    first.join();
    second.join();
    QCOMPARE(a, b);
    QTemporaryDir fresh;
    const QString reference = ensure_builtin_model(fresh.path());
    QFile x(a), y(reference);
    QVERIFY(x.open(QIODevice::ReadOnly) && y.open(QIODevice::ReadOnly));
    QVERIFY(x.readAll() == y.readAll());
    QVERIFY(leftovers(dir.path()).isEmpty());
  }
};

}  // namespace kvscope::ui

QTEST_MAIN(kvscope::ui::BuiltinModelTest)
#include "builtin_model_test.moc"
