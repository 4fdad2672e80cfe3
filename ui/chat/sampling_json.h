// A chat's sampling settings as the chats keep them: the database's sampling column
// (chat_store.h) and an exported chat's "sampling" (chat_export.h). That is the engine's
// form of SamplingParams (serve/sampling_json.h) with the reply length beside it, and the
// seed as a decimal string: Qt's JSON reads numbers as doubles, which would round 64 bits.
//
//   {"frequency_penalty": 0, "max_tokens": 256, "min_p": 0.05000000074505806, ...,
//    "seed": "0", "temperature": 0.800000011920929, "top_k": 40, "top_p": 0.949999988079071}
#pragma once

#include <QJsonObject>
#include <QString>

namespace kvscope::ui {

struct SamplingSettings;

QJsonObject samplingSettingsJson(const SamplingSettings& settings);

// Keys left out keep their defaults (a later version may add some), unknown ones are
// ignored. Throws UsageError naming the field for a value of the wrong type or out of range,
// or for a text that is not a JSON object.
SamplingSettings samplingSettingsFromJson(const QString& json);

}  // namespace kvscope::ui
