#include "window/language.h"

#include <QActionGroup>
#include <QCoreApplication>
#include <QLibraryInfo>
#include <QMessageBox>
#include <QSettings>
#include <QTranslator>

namespace kvscope::ui {

namespace {

constexpr auto kLanguageKey = "language";
// Object name of the translators install_translators() owns, so a second call replaces them.
constexpr auto kTranslatorName = "kvscopeTranslator";

// How each language names itself: a menu entry a reader of that language recognises.
QString native_name(const QString& code) {
  if (code == QLatin1String("zh_CN")) return QStringLiteral("\u7b80\u4f53\u4e2d\u6587");
  return QStringLiteral("English");
}

bool add_translator(const QLocale& locale, const QString& name, const QString& folder) {
  auto* translator = new QTranslator(QCoreApplication::instance());
  translator->setObjectName(QLatin1String(kTranslatorName));
  if (translator->load(locale, name, QStringLiteral("_"), folder) &&
      QCoreApplication::installTranslator(translator)) {
    return true;
  }
  delete translator;
  return false;
}

}  // namespace

QStringList language_codes() {
  return {QStringLiteral("en"), QStringLiteral("zh_CN")};
}

QString saved_language() {
  const QString code = QSettings().value(kLanguageKey).toString();
  return language_codes().contains(code) ? code : QString();
}

void save_language(const QString& code) {
  QSettings().setValue(kLanguageKey, code);
}

QLocale language_locale(const QString& code) {
  return code.isEmpty() ? QLocale::system() : QLocale(code);
}

bool install_translators(const QString& code) {
  QCoreApplication* app = QCoreApplication::instance();
  for (QTranslator* old : app->findChildren<QTranslator*>(QLatin1String(kTranslatorName),
                                                          Qt::FindDirectChildrenOnly)) {
    QCoreApplication::removeTranslator(old);
    delete old;
  }
  // The locale's UI languages in order (for the system locale, $LANGUAGE's list too); English,
  // the language of the sources, has no file, and then Qt's own dialogs stay English too.
  const QLocale locale = language_locale(code);
  const bool ours = add_translator(locale, QStringLiteral("kvscope"), QStringLiteral(":/i18n"));
  if (ours) {  // Qt's buttons (OK, Cancel, ...) only where the rest is translated as well
    add_translator(locale, QStringLiteral("qtbase"),
                   QLibraryInfo::path(QLibraryInfo::TranslationsPath));
  }
  return ours;
}

LanguageMenu::LanguageMenu(QWidget* parent) : QMenu(tr("&Language"), parent) {
  setObjectName(QStringLiteral("languageMenu"));
  auto* group = new QActionGroup(this);
  const QString saved = saved_language();
  QStringList codes = language_codes();
  codes.prepend(QString());
  for (const QString& code : codes) {
    QAction* a = addAction(code.isEmpty() ? tr("System default") : native_name(code));
    a->setObjectName(code.isEmpty() ? QStringLiteral("languageSystem")
                                    : QStringLiteral("language_") + code);
    a->setCheckable(true);
    a->setChecked(code == saved);
    group->addAction(a);
    connect(a, &QAction::triggered, this, [this, code] { choose(code); });
  }
}

void LanguageMenu::choose(const QString& code) {
  if (code == saved_language()) return;
  save_language(code);
  if (confirm_ ? confirm_() : ask_restart()) emit restartRequested();
}

bool LanguageMenu::ask_restart() {
  return QMessageBox::question(
             parentWidget(), tr("Language"),
             tr("KVScope shows the new language after a restart. Restart now? Chats are "
                "saved; a reply that is being written is stopped."),
             QMessageBox::Yes | QMessageBox::No, QMessageBox::Yes) == QMessageBox::Yes;
}

}  // namespace kvscope::ui
