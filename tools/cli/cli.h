// One command-line convention for every braid program, on CLI11: --help/-h prints the help and
// exits 0; any bad argument prints one sentence naming it ("braid-sim: --gpus: ...") and exits 2,
// like the shells' and coreutils' usage errors. Header-only, so that programs which link only
// braid's public API (braid-perf, braid-train) can use it too.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <string>

namespace braid::cli {

inline constexpr int kUsageError = 2;

/// The one-sentence refusal: "<program>: <why> (see <program> --help)".
inline void usageError(const std::string& program, const std::string& why) {
  std::fprintf(stderr, "%s: %s (see %s --help)\n", program.c_str(), why.c_str(), program.c_str());
}

/// Parses argv into `app`. Returns nothing when the program should go on, else the exit status:
/// 0 after printing the help, kUsageError after printing why the arguments were refused.
inline std::optional<int> parse(CLI::App& app, int argc, const char* const* argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return 0;
  } catch (const CLI::CallForAllHelp&) {
    std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
    return 0;
  } catch (const CLI::ParseError& e) {
    usageError(app.get_name(), e.what());
    return kUsageError;
  }
  return std::nullopt;
}

}  // namespace braid::cli
