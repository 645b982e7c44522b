// SPDX-License-Identifier: Apache-2.0
// RFC 9651 (Structured Field Values, which obsoletes RFC 8941): the Dictionary parser that the
// integrity fields of RFC 9530 need, with every bare item type so that any member can be skipped.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "mc/status.h"

namespace mc::sf {

/// The type of a member's value. Parameters are checked but not kept.
enum class Kind : unsigned char {
    kInteger,
    kDecimal,
    kString,
    kToken,
    kByteSequence,
    kBoolean,
    kDate,
    kDisplayString,
    kInnerList,
};

/// One member of a Dictionary. `bytes` holds the decoded bytes of a byte sequence, the unescaped
/// text of a string or display string, and the text of the other bare items; nothing for an inner
/// list.
struct Member {
    std::string key;
    Kind kind = Kind::kBoolean;
    std::string bytes;
};

/// Parses a Dictionary field value (RFC 9651 §4.2.2; several field lines joined with ", "). A
/// key given twice keeps its first position and its last value, as the RFC says. Anything that
/// is not a Dictionary is kInvalidArgument with the reason; an empty value is an empty
/// Dictionary.
Result<std::vector<Member>> parse_dictionary(std::string_view value);

/// Base64 (RFC 4648 §4) with padding, as a byte sequence is serialized.
std::string base64(std::string_view bytes);

}  // namespace mc::sf
