// tokenizer.model -> RefSpmModel (see ref_spm_model.hpp). Field numbers from sentencepiece's
// sentencepiece_model.proto: ModelProto pieces 1, trainer_spec 2, normalizer_spec 3; SentencePiece
// piece 1, score 2 (float, 32-bit), type 3; TrainerSpec model_type 3, byte_fallback 35, unk_id 40,
// bos_id 41, eos_id 42, pad_id 43; NormalizerSpec precompiled_charsmap 2, add_dummy_prefix 3,
// remove_extra_whitespaces 4.
// Scalars that occur twice take the last value, and a repeated sub-message merges, as protobuf
// parsers do.
#include "verify/tokenizer/ref_spm_model.hpp"

#include <cstring>

#include "rebox/error.hpp"

namespace rebox::verify_ref {
namespace {

enum WireType : uint8_t { kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5 };

struct Field {
    uint64_t number = 0;
    uint8_t wire = 0;
    uint64_t varint = 0;     // kVarint
    uint32_t fixed32 = 0;    // kFixed32
    std::string_view bytes;  // kBytes
};

// One message's fields in order; `where` names the message in errors.
class WireReader {
  public:
    WireReader(std::string_view data, const std::string& file, std::string where)
        : data_(data), file_(file), where_(std::move(where)) {}

    bool next(Field& field) {
        if (at_ == data_.size()) return false;
        const uint64_t tag = varint("a field tag");
        field = Field{};
        field.number = tag >> 3;
        field.wire = static_cast<uint8_t>(tag & 7);
        if (field.number == 0) fail("field number 0 (not protobuf)");
        switch (field.wire) {
            case kVarint:
                field.varint = varint("a varint value");
                break;
            case kFixed64:
                take(8, "a 64-bit value");
                break;
            case kFixed32: {
                const std::string_view raw = take(4, "a 32-bit value");
                uint8_t b[4];
                std::memcpy(b, raw.data(), 4);
                field.fixed32 = uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 |
                                uint32_t{b[3]} << 24;
                break;
            }
            case kBytes: {
                const uint64_t length = varint("a length");
                if (length > data_.size() - at_)
                    fail("field " + std::to_string(field.number) + " says " +
                         std::to_string(length) + " bytes, but " +
                         std::to_string(data_.size() - at_) + " remain");
                field.bytes = take(static_cast<size_t>(length), "");
                break;
            }
            default:
                fail("field " + std::to_string(field.number) + " has wire type " +
                     std::to_string(field.wire) + " (groups and types 6, 7 are not read)");
        }
        return true;
    }

    [[noreturn]] void fail(const std::string& what) const {
        throw Error(ExitClass::input, file_, where_,
                    what + " at byte " + std::to_string(at_) + " of the message",
                    "an intact SentencePiece model (re-download tokenizer.model)");
    }

    void expect(const Field& field, uint8_t wire, const char* name) const {
        if (field.wire != wire)
            fail(std::string(name) + " (field " + std::to_string(field.number) +
                 ") has wire type " + std::to_string(field.wire) + ", not " + std::to_string(wire));
    }

  private:
    uint64_t varint(const char* what) {
        uint64_t value = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (at_ == data_.size()) fail(std::string("truncated varint (") + what + ")");
            const auto byte = static_cast<uint8_t>(data_[at_++]);
            if (shift == 63 && byte > 1) fail(std::string("varint over 64 bits (") + what + ")");
            value |= uint64_t{byte & 0x7Fu} << shift;
            if ((byte & 0x80u) == 0) return value;
        }
        fail(std::string("varint longer than 10 bytes (") + what + ")");
    }

    std::string_view take(size_t n, const char* what) {
        if (n > data_.size() - at_) fail(std::string("truncated ") + what);
        const std::string_view out = data_.substr(at_, n);
        at_ += n;
        return out;
    }

    std::string_view data_;
    const std::string& file_;
    std::string where_;
    size_t at_ = 0;
};

// proto2 int32 / enum: the low 32 bits of the varint (negative values are sign-extended to 64).
int32_t as_int32(uint64_t varint) { return static_cast<int32_t>(static_cast<uint32_t>(varint)); }

RefSpmPiece read_piece(std::string_view bytes, const std::string& file, size_t index) {
    WireReader reader(bytes, file, "pieces[" + std::to_string(index) + "]");
    RefSpmPiece piece;
    Field field;
    while (reader.next(field)) {
        if (field.number == 1) {
            reader.expect(field, kBytes, "piece");
            piece.text.assign(field.bytes);
        } else if (field.number == 2) {
            reader.expect(field, kFixed32, "score");
            std::memcpy(&piece.score, &field.fixed32, sizeof piece.score);
        } else if (field.number == 3) {
            reader.expect(field, kVarint, "type");
            piece.type = as_int32(field.varint);
        }
    }
    return piece;
}

void read_trainer_spec(std::string_view bytes, const std::string& file, RefSpmModel& model) {
    WireReader reader(bytes, file, "trainer_spec");
    Field field;
    while (reader.next(field)) {
        int32_t* target = nullptr;
        switch (field.number) {
            case 3:
                target = &model.model_type;
                break;
            case 40:
                target = &model.unk_id;
                break;
            case 41:
                target = &model.bos_id;
                break;
            case 42:
                target = &model.eos_id;
                break;
            case 43:
                target = &model.pad_id;
                break;
            case 35:
                reader.expect(field, kVarint, "byte_fallback");
                model.byte_fallback = field.varint != 0;
                continue;
            default:
                continue;
        }
        reader.expect(field, kVarint, "an id or model_type");
        *target = as_int32(field.varint);
    }
}

void read_normalizer_spec(std::string_view bytes, const std::string& file, RefSpmModel& model) {
    WireReader reader(bytes, file, "normalizer_spec");
    Field field;
    while (reader.next(field)) {
        if (field.number == 3) {
            reader.expect(field, kVarint, "add_dummy_prefix");
            model.add_dummy_prefix = field.varint != 0;
        } else if (field.number == 4) {
            reader.expect(field, kVarint, "remove_extra_whitespaces");
            model.remove_extra_whitespaces = field.varint != 0;
        } else if (field.number == 2) {
            reader.expect(field, kBytes, "precompiled_charsmap");
            model.precompiled_charsmap.assign(field.bytes.begin(), field.bytes.end());
        }
    }
}

}  // namespace

RefSpmModel parse_ref_spm_model(std::string_view bytes, const std::string& file,
                                uint64_t max_pieces) {
    // First pass: the wire structure of the top level, and the piece count.
    uint64_t piece_count = 0;
    {
        WireReader counter(bytes, file, "ModelProto");
        Field field;
        while (counter.next(field))
            if (field.number == 1 && ++piece_count > max_pieces)
                throw Error(ExitClass::input, file, "pieces",
                            "more than " + std::to_string(max_pieces) + " pieces",
                            "at most " + std::to_string(max_pieces) +
                                " (config.json vocab_size, or verify's cap)");
    }
    RefSpmModel model;
    model.pieces.reserve(piece_count);
    WireReader reader(bytes, file, "ModelProto");
    Field field;
    while (reader.next(field)) {
        if (field.number == 1) {
            reader.expect(field, kBytes, "pieces");
            model.pieces.push_back(read_piece(field.bytes, file, model.pieces.size()));
        } else if (field.number == 2) {
            reader.expect(field, kBytes, "trainer_spec");
            read_trainer_spec(field.bytes, file, model);
        } else if (field.number == 3) {
            reader.expect(field, kBytes, "normalizer_spec");
            read_normalizer_spec(field.bytes, file, model);
        }
    }
    if (model.pieces.empty())
        throw Error(ExitClass::input, file, "pieces", "none", "a SentencePiece model's pieces");
    return model;
}

}  // namespace rebox::verify_ref
