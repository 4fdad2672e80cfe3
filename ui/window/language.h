// The interface language. KVScope follows the system locale unless View > Language chose
// one, remembered in QSettings ("language": "" follows the system, "en", "zh_CN"). The
// translators (KVScope's own .qm, embedded under :/i18n, and Qt's qtbase for the standard
// dialogs) are installed once at start, before any window is built; a change made in the
// menu shows after a restart, which the menu offers.
#pragma once

#include <QLocale>
#include <QMenu>
#include <QString>
#include <QStringList>

#include <functional>

namespace kvscope::ui {

// The codes View > Language offers after "System default" (""): "en", "zh_CN".
QStringList language_codes();
// The saved choice ("" when none, or when the saved value is not one of language_codes()).
QString saved_language();
void save_language(const QString& code);

// The locale `code` names ("" = QLocale::system()).
QLocale language_locale(const QString& code);
// Replaces the translators a previous call installed with those for `code`; returns
// whether KVScope's own translation for that locale was found (always false for English,
// the language of the sources).
bool install_translators(const QString& code);

// View > Language: System default, English, 简体中文, checked as saved. Choosing another
// saves it and asks whether to restart now (the confirmation is replaceable for tests);
// yes emits restartRequested().
class LanguageMenu : public QMenu {
  Q_OBJECT

 public:
  explicit LanguageMenu(QWidget* parent = nullptr);
  void setRestartConfirmation(std::function<bool()> confirm) { confirm_ = std::move(confirm); }

 signals:
  void restartRequested();

 private:
  void choose(const QString& code);
  bool ask_restart();

  std::function<bool()> confirm_;
};

}  // namespace kvscope::ui
