#include "worker/engine_messages.h"

namespace kvscope::ui {

void register_engine_metatypes() {
  qRegisterMetaType<LoadRequest>();
  qRegisterMetaType<ModelInfo>();
  qRegisterMetaType<ChatRequest>();
  qRegisterMetaType<ReplyFinished>();
  qRegisterMetaType<PanelFrame>();
  qRegisterMetaType<SpeedSample>();
  qRegisterMetaType<PlanCheck>();
  qRegisterMetaType<ChatId>("kvscope::ui::ChatId");
}

}  // namespace kvscope::ui
