#include "model/json_reader.h"

#include <new>

#include "util/error.h"
#include "util/regular_file.h"
#include "util/utf8.h"

namespace kvscope {

using nlohmann::json;

namespace {

// nlohmann's messages quote the token it stopped in, which can be a whole string value.
constexpr std::size_t kMaxParserMessageBytes = 240;

}  // namespace

json parse_json(std::string_view text, const std::string& source, const JsonLimits& limits,
                const JsonTopLevelKeyHook& on_key) {
  if (text.size() > limits.max_bytes) {
    throw_error<ModelError>("{}: {} bytes of JSON is over the {} byte limit for this file", source,
                            text.size(), limits.max_bytes);
  }
  // The callback sees every value before it joins the document: `depth` counts the
  // containers around it, so a container opened at depth max_depth would be one too many.
  std::uint64_t values = 0;
  auto on_event = [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (depth >= limits.max_depth) {
          throw_error<ModelError>(
              "{}: JSON nested more than {} levels deep (model files need a few); refusing it",
              source, limits.max_depth);
        }
        [[fallthrough]];
      case json::parse_event_t::key:
      case json::parse_event_t::value:
        if (++values > limits.max_values) {
          throw_error<ModelError>("{}: more than {} JSON values and keys; refusing to build it",
                                  source, limits.max_values);
        }
        break;
      default:
        break;
    }
    if (on_key && event == json::parse_event_t::key && depth == 1) {
      on_key(parsed.get_ref<const std::string&>());
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), on_event);
  } catch (const json::exception& e) {
    throw_error<ModelError>("{}: not valid JSON ({})", source,
                            quote_prefix(e.what(), kMaxParserMessageBytes));
  } catch (const std::bad_alloc&) {
    throw_error<ModelError>("{}: out of memory while parsing {} bytes of JSON", source,
                            text.size());
  }
}

json read_json_file(const std::string& path, const JsonLimits& limits) {
  // A FIFO or a device would be read without end (or block the open): regular files only.
  const RegularFile file(path);
  if (!file.is_open()) throw_error<ModelError>("{}: cannot read ({})", path, file.error());
  const std::uint64_t size = file.size();
  if (size > limits.max_bytes) {
    throw_error<ModelError>("{}: {} bytes is over the {} byte limit for this file", path, size,
                            limits.max_bytes);
  }
  // At most `size` bytes, even if the file grows while it is read.
  std::string text(static_cast<std::size_t>(size), '\0');
  text.resize(file.read_at(0, text.data(), text.size()));
  return parse_json(text, path, limits);
}

std::string quote_prefix(std::string_view text, std::size_t max) {
  if (text.size() <= max) return escape_bytes(text);
  return fmt::format("{}... ({} bytes)", escape_bytes(text.substr(0, max)), text.size());
}

std::string describe_json(const json& value) {
  switch (value.type()) {
    case json::value_t::string:
      return fmt::format("string \"{}\"", quote_prefix(value.get_ref<const std::string&>()));
    case json::value_t::array:
      return fmt::format("array of {} element{}", value.size(), value.size() == 1 ? "" : "s");
    case json::value_t::object:
      return fmt::format("object of {} member{}", value.size(), value.size() == 1 ? "" : "s");
    case json::value_t::boolean:
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return fmt::format("{} {}", value.type_name(), value.dump());  // a scalar: bounded
    default:
      return value.type_name();  // null, binary, discarded
  }
}

}  // namespace kvscope
