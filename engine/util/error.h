// Errors a user can act on. Every bad input (file, flag, prompt) ends in one of these,
// thrown with a message that names the thing that is wrong and the numbers involved,
// e.g. "tensor blk.3.attn_k.weight: offset 91234 past end of file (size 90000)".
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

namespace kvscope {

// Base of every error the engine reports to its callers.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// A model file (GGUF, safetensors, config.json, tokenizer.model) is malformed or unsupported.
class ModelError : public Error {
 public:
  using Error::Error;
};

// Text could not be tokenized or decoded, or a template could not be rendered.
class TextError : public Error {
 public:
  using Error::Error;
};

// A request cannot be served with the memory or context there is (names both numbers).
class CapacityError : public Error {
 public:
  using Error::Error;
};

// The caller asked an operation in progress to stop (a model load: EngineOptions::cancel_load).
class CancelledError : public Error {
 public:
  using Error::Error;
};

// A caller passed an invalid option or argument.
class UsageError : public Error {
 public:
  using Error::Error;
};

// Formats and throws in one step: throw_error<ModelError>("tensor {}: ...", name, ...).
template <typename E, typename... Args>
[[noreturn]] void throw_error(fmt::format_string<Args...> format, Args&&... args) {
  throw E(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace kvscope
