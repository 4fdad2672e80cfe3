// An error the server answers with, in OpenAI's shape:
//   {"error": {"message": "...", "type": "invalid_request_error", "param": "...", "code": null}}
// with its HTTP status. Thrown by request parsing and the handlers, caught where the
// response is written; the message names the field and the value's problem.
#pragma once

#include <stdexcept>
#include <string>

namespace kvscope::serve {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string type, const std::string& message, std::string param = {})
      : std::runtime_error(message),
        status_(status),
        type_(std::move(type)),
        param_(std::move(param)) {}

  int status() const { return status_; }
  const std::string& type() const { return type_; }
  const std::string& param() const { return param_; }  // "" when no one field is at fault
  // The JSON body of the response.
  std::string body() const;

 private:
  int status_;
  std::string type_;
  std::string param_;
};

// 400 invalid_request_error, naming `param` when one field is wrong.
ApiError bad_request(const std::string& message, std::string param = {});

}  // namespace kvscope::serve
