#include "compiler/codegen/emit/names.h"

#include <cmath>

#include "compiler/ir/printer.h"

namespace mono::emit {

const char* ctype(DType d) {
  switch (d) {
    case DType::kF32: return "float";
    case DType::kF16: return "half_t";
    case DType::kI64: return "long long";
    case DType::kI32: return "int";
    case DType::kBool: return "unsigned char";
  }
  return "?";
}

const char* compute_type(DType d) {
  if (is_float(d)) return "float";
  if (d == DType::kBool) return "bool";
  return "long long";
}

std::string literal(double v) {
  if (std::isnan(v)) return "__int_as_float(0x7fc00000)";
  if (std::isinf(v)) return v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  return format_float(v) + "f";
}

std::string comment_text(const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    // Printable ASCII stays; everything else, and the characters that could change the source
    // around a comment (a backslash splices the next line into it; '?' starts trigraphs like
    // "??/"), is written as <hh>. A NUL would cut the source at nvrtcCreateProgram.
    if (c >= 0x20 && c <= 0x7e && c != '\\' && c != '?' && c != '<') {
      out += static_cast<char>(c);
    } else {
      out += '<';
      out += kHex[c >> 4];
      out += kHex[c & 15];
      out += '>';
    }
  }
  size_t p;
  while ((p = out.find("*/")) != std::string::npos) out.replace(p, 2, "* /");
  return out;
}

std::string identifier(const std::string& text) {
  constexpr size_t kMax = 48;
  std::string out;
  for (unsigned char c : text) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (alnum) out += static_cast<char>(c);
    else if (!out.empty() && out.back() != '_') out += '_';
  }
  if (out.size() > kMax) {  // the tail, from a word boundary
    out = out.substr(out.size() - kMax);
    const size_t cut = out.find('_');
    if (cut != std::string::npos && cut + 1 < out.size()) out = out.substr(cut + 1);
  }
  while (!out.empty() && out.front() == '_') out.erase(out.begin());
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out;
}

// On bert-base, code that differs only in comments is 11 group functions instead of 100: the
// kernel ran 23% faster on the H100 and NVRTC built it 10x faster (bench/RESULTS.md, 2026-11-25).
std::string code_without_comments(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"' && (i == 0 || text[i - 1] != '\\')) in_string = !in_string;
    if (!in_string && c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') ++i;
      if (i < text.size()) out += '\n';
      continue;
    }
    out += c;
  }
  return out;
}

std::string snake_case(const std::string& camel) {
  std::string out;
  for (size_t i = 0; i < camel.size(); ++i) {
    const char c = camel[i];
    if (c >= 'A' && c <= 'Z') {
      if (i > 0) out += '_';
      out += static_cast<char>(c - 'A' + 'a');
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace mono::emit
