// Internal to the GGUF reader (gguf_file.cpp, gguf_value.cpp): decoding metadata values.
// Each function throws ModelError naming the field and the offset when the bytes are
// short, a length is impossible, or a value is invalid (unknown type, bool not 0/1).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/gguf/byte_reader.h"
#include "model/gguf/gguf_file.h"

namespace kvscope {

// " (-1 as a signed count)" for a count that only makes sense as a negative int64, else "".
std::string signed_hint(std::uint64_t count);

// A uint64 length and that many bytes; the view points into the reader's buffer.
std::string_view read_gguf_string(ByteReader& r, std::string_view what);

// A uint32 value type, rejected when GGUF does not define it.
GgufType read_gguf_type(ByteReader& r, std::string_view what);

// One value of `type`, every element of an array checked (`depth` levels deep so far);
// strings and arrays are views into the reader's bytes.
GgufValue read_gguf_value(ByteReader& r, GgufType type, int depth = 0);

}  // namespace kvscope
