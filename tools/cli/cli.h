// One command-line convention for every braid program, on CLI11: --help/-h prints the help and
// exits 0; any bad argument prints one sentence naming it ("braid-sim: --gpus: ...") and exits 2,
// like the shells' and coreutils' usage errors. Header-only, so that programs which link only
// braid's public API (braid-perf, braid-train) can use it too.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace braid::cli {

inline constexpr int kUsageError = 2;

/// The one-sentence refusal: "<program>: <why> (see <program> --help)".
inline void usageError(const std::string& program, const std::string& why) {
  std::fprintf(stderr, "%s: %s (see %s --help)\n", program.c_str(), why.c_str(), program.c_str());
}

/// Help that opens with the program's own usage lines (CLI11 would print "Usage: prog
/// [OPTIONS]" after the description, which says nothing of a launcher's program and its
/// arguments), then the description, the options and the footer.
class UsageFirst : public CLI::Formatter {
 public:
  explicit UsageFirst(std::string usage) : usage_(std::move(usage)) {}
  std::string make_description(const CLI::App*) const override { return ""; }
  std::string make_usage(const CLI::App* app, std::string) const override {
    return usage_ + "\n\n" + app->get_description() + "\n";
  }

 private:
  std::string usage_;
};

/// Gives `app` those usage lines ("usage: prog ...", no final newline).
inline void setUsage(CLI::App& app, std::string usage) {
  app.formatter(std::make_shared<UsageFirst>(std::move(usage)));
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
