#include "serve/api_error.h"

#include <nlohmann/json.hpp>

namespace kvscope::serve {

std::string ApiError::body() const {
  nlohmann::json error = {{"message", what()}, {"type", type_}, {"code", status_}};
  error["param"] = param_.empty() ? nlohmann::json(nullptr) : nlohmann::json(param_);
  return nlohmann::json{{"error", error}}.dump(-1, ' ', false,
                                               nlohmann::json::error_handler_t::replace);
}

ApiError bad_request(const std::string& message, std::string param) {
  return ApiError(400, "invalid_request_error", message, std::move(param));
}

}  // namespace kvscope::serve
