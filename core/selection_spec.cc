// Parser and matcher of the BRAID_ALGO / BRAID_PROTO syntax (see selection_spec.h).
#include "core/selection_spec.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>

namespace braid {
namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    size_t end = text.find(sep, start);
    parts.push_back(text.substr(start, end == std::string::npos ? end : end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

bool isName(const std::string& s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// "16K", "1M", "4096" -> bytes; false on anything else (including overflow).
bool parseSize(const std::string& text, size_t* out) {
  if (text.empty() || text[0] < '0' || text[0] > '9') return false;
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (errno != 0) return false;
  int shift = 0;
  switch (*end) {
    case 'k':
    case 'K':
      shift = 10;
      ++end;
      break;
    case 'm':
    case 'M':
      shift = 20;
      ++end;
      break;
    case 'g':
    case 'G':
      shift = 30;
      ++end;
      break;
    default:
      break;
  }
  if (*end == 'B' || *end == 'b') ++end;
  if (*end != '\0' || (shift > 0 && v > (~0ull >> shift))) return false;
  *out = static_cast<size_t>(v << shift);
  return true;
}

}  // namespace

Result<SelectionSpec> SelectionSpec::parse(const std::string& text, const std::string& variable,
                                           const std::vector<std::string>& collectives) {
  SelectionSpec spec;
  if (text.empty()) return spec;
  auto bad = [&](const std::string& token, const std::string& why) {
    return invalidArgument(variable + "='" + text + "': token '" + token + "' " + why);
  };
  std::vector<std::string> seen;
  for (const std::string& rule : split(text, ';')) {
    std::string collective;
    std::string body = rule;
    if (size_t colon = rule.find(':'); colon != std::string::npos) {
      collective = rule.substr(0, colon);
      body = rule.substr(colon + 1);
      if (std::find(collectives.begin(), collectives.end(), collective) == collectives.end()) {
        return bad(collective, "is not a collective");
      }
    }
    if (std::find(seen.begin(), seen.end(), collective) != seen.end()) {
      return bad(rule, collective.empty() ? "repeats the rule for every collective"
                                          : "repeats the rule for " + collective);
    }
    seen.push_back(collective);
    for (const std::string& item : split(body, ',')) {
      SelectionChoice choice;
      choice.collective = collective;
      size_t at = item.find('@');
      choice.name = item.substr(0, at);
      if (!isName(choice.name)) return bad(item, "is not a name (lower-case letters, digits, _)");
      if (at != std::string::npos) {
        std::string range = item.substr(at + 1);
        size_t dash = range.find('-');
        if (dash == std::string::npos) return bad(item, "needs a range lo-hi after '@'");
        std::string lo = range.substr(0, dash), hi = range.substr(dash + 1);
        if (!lo.empty() && !parseSize(lo, &choice.minBytes)) return bad(lo, "is not a size");
        if (!hi.empty() && !parseSize(hi, &choice.maxBytes)) return bad(hi, "is not a size");
        if (choice.minBytes > choice.maxBytes) return bad(range, "is an empty range");
      }
      spec.choices_.push_back(choice);
    }
  }
  return spec;
}

std::string SelectionSpec::pick(const std::string& collective, size_t bytes) const {
  for (const bool specific : {true, false}) {
    for (const SelectionChoice& c : choices_) {
      if (specific ? c.collective != collective : !c.collective.empty()) continue;
      if (bytes >= c.minBytes && bytes <= c.maxBytes) return c.name;
    }
  }
  return "";
}

}  // namespace braid
