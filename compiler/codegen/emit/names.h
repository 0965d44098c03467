// Text that reaches the generated source: C types, literals, and the one function through which
// model text (node and tensor names) enters it.
#pragma once

#include <string>

#include "compiler/ir/dtype.h"

namespace mono::emit {

const char* ctype(DType d);         // the storage type: "float", "half_t", "long long", ...
const char* compute_type(DType d);  // the type an element is computed in: float, bool or long long
std::string literal(double v);      // a float literal ("0.5f"), NaN and infinities by bit pattern
// Model text for a comment: printable ASCII as it is, any other byte and '\\', '?', '<' as
// <hh> (so no backslash can splice the next line into a `//` comment, no trigraph or NUL
// reaches NVRTC, and the text stays unambiguous), "*/" broken, so that no name can end a
// comment early. The one way model text reaches generated source besides identifier().
std::string comment_text(const std::string& s);
// A C identifier part made from model text: letters and digits kept, anything else (and runs
// of it) one underscore, no leading or trailing underscore, at most 48 characters (the tail
// kept: the distinguishing part of exporters' names); "" when nothing is left. Callers add a
// prefix, so the result never starts with a digit or an underscore.
std::string identifier(const std::string& text);
// Generated code without its // comments (no emitted code has "//" in a string literal): what
// decides whether two pieces of code are the same (kernel.cc defines code that differs only in
// comments, such as the node names an epilogue cites layer by layer, once).
std::string code_without_comments(const std::string& code);
// "LayerNormalization" -> "layer_normalization".
std::string snake_case(const std::string& camel);

}  // namespace mono::emit
