// braidrun's command line as its parts tests (braidrun_parts_test.cc,
// braidrun_hosts_parts_test.cc) parse it: parseOptions on "braidrun <args>",
// with the options it filled in or the error it gave.
#pragma once

#include <string>
#include <vector>

#include "braidrun/options.h"

namespace braid::run {

struct Parsed {
  bool ok;
  Options options;
  std::string error;
};

/// parseOptions of "braidrun" followed by `args`.
inline Parsed parse(std::vector<const char*> args) {
  args.insert(args.begin(), "braidrun");
  Parsed parsed;
  parsed.ok =
      parseOptions(static_cast<int>(args.size()), args.data(), &parsed.options, &parsed.error);
  return parsed;
}

}  // namespace braid::run
