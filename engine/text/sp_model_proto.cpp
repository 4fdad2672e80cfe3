#include "text/sp_model_proto.h"

#include <bit>

#include "util/error.h"

namespace kvscope {

namespace {

// Protobuf wire types (https://protobuf.dev/programming-guides/encoding/).
enum Wire : std::uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// ModelProto field numbers (see the header).
constexpr std::uint32_t kModelPieces = 1, kModelTrainerSpec = 2, kModelNormalizerSpec = 3;
constexpr std::uint32_t kPiecePiece = 1, kPieceScore = 2, kPieceType = 3;
constexpr std::uint32_t kTrainerModelType = 3, kTrainerVocabSize = 4, kTrainerByteFallback = 35,
                        kTrainerUnkId = 40, kTrainerBosId = 41, kTrainerEosId = 42,
                        kTrainerPadId = 43;
constexpr std::uint32_t kNormName = 1, kNormAddDummyPrefix = 3, kNormRemoveExtraWhitespaces = 4,
                        kNormEscapeWhitespaces = 5;

class ProtoWriter {
 public:
  // int32 fields are written as protobuf does: negatives sign-extended to 64 bits.
  void int_field(std::uint32_t field, std::int64_t v) {
    tag(field, kVarint);
    varint(static_cast<std::uint64_t>(v));
  }
  void bool_field(std::uint32_t field, bool v) { int_field(field, v ? 1 : 0); }
  void float_field(std::uint32_t field, float v) {
    tag(field, kFixed32);
    const auto bits = std::bit_cast<std::uint32_t>(v);
    for (int shift = 0; shift < 32; shift += 8) out_ += static_cast<char>((bits >> shift) & 0xFF);
  }
  void bytes_field(std::uint32_t field, std::string_view v) {
    tag(field, kLengthDelimited);
    varint(v.size());
    out_ += v;
  }
  std::string take() { return std::move(out_); }

 private:
  void tag(std::uint32_t field, Wire wire) { varint((std::uint64_t{field} << 3) | wire); }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      out_ += static_cast<char>((v & 0x7F) | 0x80);
      v >>= 7;
    }
    out_ += static_cast<char>(v);
  }
  std::string out_;
};

// One field as read from the wire: `value` for varint/fixed types, `bytes` for
// length-delimited ones; `offset` is where its tag starts in the whole input.
struct ProtoField {
  std::uint32_t number = 0;
  std::uint32_t wire = 0;
  std::uint64_t value = 0;
  std::string_view bytes;
  std::size_t offset = 0;
  std::size_t value_offset = 0;  // where the value (or the length of `bytes`) starts
};

// Reads fields from one message; every read checks the bytes left first.
class ProtoReader {
 public:
  ProtoReader(std::string_view bytes, std::size_t base, const std::string& source)
      : bytes_(bytes), base_(base), source_(source) {}

  bool done() const { return pos_ == bytes_.size(); }

  ProtoField next() {
    ProtoField f;
    f.offset = base_ + pos_;
    const std::uint64_t key = varint();
    f.number = static_cast<std::uint32_t>(key >> 3);
    f.wire = static_cast<std::uint32_t>(key & 7);
    if (f.number == 0 || key >> 32 != 0) fail(f.offset, "invalid field number");
    f.value_offset = base_ + pos_;
    switch (f.wire) {
      case kVarint:
        f.value = varint();
        break;
      case kFixed64:
        f.value = fixed(8);
        break;
      case kFixed32:
        f.value = fixed(4);
        break;
      case kLengthDelimited: {
        const std::uint64_t length = varint();
        if (length > bytes_.size() - pos_) {
          fail(f.offset, fmt::format("field {} claims {} bytes, only {} left", f.number, length,
                                     bytes_.size() - pos_));
        }
        f.bytes = bytes_.substr(pos_, length);
        pos_ += length;
        break;
      }
      default:
        fail(f.offset, fmt::format("field {}: unsupported wire type {}", f.number, f.wire));
    }
    return f;
  }

  // The field's payload as a nested message.
  ProtoReader nested(const ProtoField& f) const {
    expect_wire(f, kLengthDelimited);
    return ProtoReader(f.bytes, base_ + (f.bytes.data() - bytes_.data()), source_);
  }

  void expect_wire(const ProtoField& f, std::uint32_t wire) const {
    if (f.wire != wire) {
      fail(f.offset, fmt::format("field {}: wire type {}, expected {}", f.number, f.wire, wire));
    }
  }
  std::int32_t int32_value(const ProtoField& f) const {
    expect_wire(f, kVarint);
    const auto v = static_cast<std::int64_t>(f.value);
    if (v < INT32_MIN || v > INT32_MAX)
      fail(f.offset, fmt::format("field {}: {} is not an int32", f.number, v));
    return static_cast<std::int32_t>(v);
  }
  bool bool_value(const ProtoField& f) const {
    expect_wire(f, kVarint);
    return f.value != 0;
  }
  float float_value(const ProtoField& f) const {
    expect_wire(f, kFixed32);
    return std::bit_cast<float>(static_cast<std::uint32_t>(f.value));
  }
  std::string string_value(const ProtoField& f) const {
    expect_wire(f, kLengthDelimited);
    return std::string(f.bytes);
  }

  [[noreturn]] void fail(std::size_t offset, const std::string& what) const {
    throw_error<ModelError>("{}: not a valid SentencePiece model: {} (at byte {})", source_, what,
                            offset);
  }

 private:
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (pos_ == bytes_.size()) fail(base_ + pos_, "truncated varint");
      const auto byte = static_cast<std::uint8_t>(bytes_[pos_++]);
      v |= std::uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80) == 0) return v;
    }
    fail(base_ + pos_, "varint longer than 10 bytes");
  }
  std::uint64_t fixed(std::size_t n) {
    if (bytes_.size() - pos_ < n) fail(base_ + pos_, "truncated fixed-size field");
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) {
      v |= std::uint64_t{static_cast<std::uint8_t>(bytes_[pos_ + i])} << (8 * i);
    }
    pos_ += n;
    return v;
  }

  std::string_view bytes_;
  std::size_t pos_ = 0;
  std::size_t base_ = 0;
  const std::string& source_;
};

SpPiece parse_piece(ProtoReader reader, std::size_t index) {
  SpPiece piece;
  while (!reader.done()) {
    const ProtoField f = reader.next();
    if (f.number == kPiecePiece) {
      piece.piece = reader.string_value(f);
    } else if (f.number == kPieceScore) {
      piece.score = reader.float_value(f);
    } else if (f.number == kPieceType) {
      const std::int32_t type = reader.int32_value(f);
      if (type < 1 || type > 6) {
        reader.fail(f.offset, fmt::format("piece {}: unknown type {}", index, type));
      }
      piece.type = static_cast<SpPieceType>(type);
    }
  }
  return piece;
}

void parse_trainer_spec(ProtoReader reader, SpModel& model) {
  while (!reader.done()) {
    const ProtoField f = reader.next();
    switch (f.number) {
      case kTrainerModelType: {
        const std::int32_t type = reader.int32_value(f);
        if (type < 1 || type > 4) reader.fail(f.offset, fmt::format("unknown model_type {}", type));
        model.algorithm = static_cast<SpModel::Algorithm>(type);
        break;
      }
      case kTrainerByteFallback:
        model.byte_fallback = reader.bool_value(f);
        break;
      case kTrainerUnkId:
        model.unk_id = reader.int32_value(f);
        break;
      case kTrainerBosId:
        model.bos_id = reader.int32_value(f);
        break;
      case kTrainerEosId:
        model.eos_id = reader.int32_value(f);
        break;
      case kTrainerPadId:
        model.pad_id = reader.int32_value(f);
        break;
      default:
        break;
    }
  }
}

void parse_normalizer_spec(ProtoReader reader, SpModel& model) {
  while (!reader.done()) {
    const ProtoField f = reader.next();
    switch (f.number) {
      case kNormName:
        model.normalizer_name = reader.string_value(f);
        break;
      case kNormAddDummyPrefix:
        model.add_dummy_prefix = reader.bool_value(f);
        break;
      case kNormRemoveExtraWhitespaces:
        model.remove_extra_whitespaces = reader.bool_value(f);
        break;
      case kNormEscapeWhitespaces:
        model.escape_whitespaces = reader.bool_value(f);
        break;
      default:
        break;
    }
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Every type field of one piece that says user-defined, rewritten in `out` to say control.
// The two values differ only in the low bits of the varint's first byte (4 needs no more
// bits, whatever the encoding's length), so the rewrite keeps every length and offset.
void make_user_defined_control(ProtoReader reader, std::string& out) {
  constexpr auto kUserDefined = static_cast<std::int32_t>(SpPieceType::UserDefined);
  constexpr auto kControl = static_cast<std::uint8_t>(SpPieceType::Control);
  while (!reader.done()) {
    const ProtoField f = reader.next();
    if (f.number != kPieceType || reader.int32_value(f) != kUserDefined) continue;
    char& first = out[f.value_offset];
    first = static_cast<char>((static_cast<std::uint8_t>(first) & 0x80) | kControl);
  }
}

}  // namespace

bool sp_whitespace_piece(std::string_view piece) {
  return !piece.empty() && piece.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

int sp_byte_piece_value(std::string_view piece) {
  if (piece.size() != 6 || !piece.starts_with("<0x") || piece[5] != '>') return -1;
  const int hi = hex_value(piece[3]);
  const int lo = hex_value(piece[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::string serialize_sp_model(const SpModel& model) {
  ProtoWriter out;
  for (const SpPiece& p : model.pieces) {
    ProtoWriter piece;
    piece.bytes_field(kPiecePiece, p.piece);
    piece.float_field(kPieceScore, p.score);
    piece.int_field(kPieceType, static_cast<std::int32_t>(p.type));
    out.bytes_field(kModelPieces, piece.take());
  }

  ProtoWriter trainer;
  trainer.int_field(kTrainerModelType, static_cast<std::int32_t>(model.algorithm));
  trainer.int_field(kTrainerVocabSize, static_cast<std::int64_t>(model.pieces.size()));
  trainer.bool_field(kTrainerByteFallback, model.byte_fallback);
  trainer.int_field(kTrainerUnkId, model.unk_id);
  trainer.int_field(kTrainerBosId, model.bos_id);
  trainer.int_field(kTrainerEosId, model.eos_id);
  trainer.int_field(kTrainerPadId, model.pad_id);
  out.bytes_field(kModelTrainerSpec, trainer.take());

  ProtoWriter normalizer;
  normalizer.bytes_field(kNormName, model.normalizer_name);
  normalizer.bool_field(kNormAddDummyPrefix, model.add_dummy_prefix);
  normalizer.bool_field(kNormRemoveExtraWhitespaces, model.remove_extra_whitespaces);
  normalizer.bool_field(kNormEscapeWhitespaces, model.escape_whitespaces);
  out.bytes_field(kModelNormalizerSpec, normalizer.take());
  return out.take();
}

SpModel parse_sp_model(std::string_view bytes, const std::string& source) {
  SpModel model;
  ProtoReader reader(bytes, 0, source);
  while (!reader.done()) {
    const ProtoField f = reader.next();
    if (f.number == kModelPieces) {
      model.pieces.push_back(parse_piece(reader.nested(f), model.pieces.size()));
    } else if (f.number == kModelTrainerSpec) {
      parse_trainer_spec(reader.nested(f), model);
    } else if (f.number == kModelNormalizerSpec) {
      parse_normalizer_spec(reader.nested(f), model);
    }
  }
  return model;
}

std::string sp_model_without_user_defined(std::string_view bytes, const std::string& source) {
  std::string out(bytes);
  ProtoReader reader(bytes, 0, source);
  while (!reader.done()) {
    const ProtoField f = reader.next();
    if (f.number == kModelPieces) make_user_defined_control(reader.nested(f), out);
  }
  return out;
}

}  // namespace kvscope
