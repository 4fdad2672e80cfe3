#include "chat/sampling_json.h"

#include <QByteArray>
#include <QJsonDocument>
#include <QJsonParseError>

#include <cstdint>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "chat/session.h"
#include "run/sampling_json.h"
#include "util/error.h"

namespace kvscope::ui {

QJsonObject samplingSettingsJson(const SamplingSettings& s) {
  // Read back by Qt's parser, so that Qt writes every number as it writes its own.
  const std::string engine_form = sampling_to_json(s.params).dump();
  QJsonObject o = QJsonDocument::fromJson(QByteArray::fromStdString(engine_form)).object();
  o["seed"] = QString::number(s.params.seed);
  o["max_tokens"] = static_cast<qint64>(s.max_tokens);
  return o;
}

SamplingSettings samplingSettingsFromJson(const QString& json) {
  QJsonParseError parse{};
  if (!QJsonDocument::fromJson(json.toUtf8(), &parse).isObject()) {
    throw UsageError("not a JSON object (" + parse.errorString().toStdString() + ")");
  }
  const nlohmann::json o = nlohmann::json::parse(json.toStdString());
  SamplingSettings s;
  s.params = sampling_from_json(o);
  if (const auto it = o.find("max_tokens"); it != o.end()) {
    const bool whole = it->is_number_unsigned()
                           ? std::in_range<std::int64_t>(it->get<std::uint64_t>())
                           : it->is_number_integer();
    if (!whole) throw UsageError("max_tokens: expected a whole number, found " + it->dump());
    s.max_tokens = it->get<std::int64_t>();
  }
  if (s.max_tokens < 1) throw UsageError("max_tokens must be at least 1");
  return s;
}

}  // namespace kvscope::ui
