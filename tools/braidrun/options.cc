#include "braidrun/options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace braid::run {
namespace {

// strtol/strtod accept leading blanks and trailing junk ("4x"); a launcher that
// silently runs 4 ranks for "-n 4x" hides typos, so both helpers demand that
// the whole string is the number.
bool parseWholeInt(const std::string& text, long* value) {
  if (text.empty() || text[0] == ' ') return false;
  char* end = nullptr;
  errno = 0;
  *value = std::strtol(text.c_str(), &end, 10);
  return errno == 0 && *end == '\0';
}

bool parseWholeDouble(const std::string& text, double* value) {
  if (text.empty() || text[0] == ' ') return false;
  char* end = nullptr;
  errno = 0;
  *value = std::strtod(text.c_str(), &end);
  return errno == 0 && *end == '\0' && std::isfinite(*value);
}

// Walks argv, handing out option values whether they come as "--opt=value",
// "-nVALUE" or the next argument.
class ArgCursor {
 public:
  ArgCursor(int argc, const char* const* argv) : argc_(argc), argv_(argv) {}

  bool done() const { return index_ >= argc_; }
  std::string_view peek() const { return argv_[index_]; }
  void advance() { ++index_; }

  // Takes the remaining arguments as the command to run.
  std::vector<std::string> rest() {
    std::vector<std::string> out(argv_ + index_, argv_ + argc_);
    index_ = argc_;
    return out;
  }

  // The value of option `name` whose text `arg` has already been consumed:
  // `inlineValue` if the option carried one, else the next argument.
  bool value(std::string_view name, const char* inlineValue, std::string* out, std::string* error) {
    if (inlineValue != nullptr) {
      *out = inlineValue;
      return true;
    }
    if (done()) {
      *error = "option " + std::string(name) + " needs a value";
      return false;
    }
    *out = argv_[index_++];
    return true;
  }

 private:
  int argc_;
  const char* const* argv_;
  int index_ = 1;  // argv[0] is braidrun
};

// Splits "--name=value" into name and value; other forms have no inline value.
// Short options take an attached value too ("-n4", "-xVAR=1"), as getopt would.
void splitOption(std::string_view arg, std::string_view* name, const char** inlineValue) {
  *inlineValue = nullptr;
  *name = arg;
  if (arg.rfind("--", 0) == 0) {
    size_t eq = arg.find('=');
    if (eq != std::string_view::npos) {
      *name = arg.substr(0, eq);
      *inlineValue = arg.data() + eq + 1;
    }
  } else if (arg.size() > 2 && arg[0] == '-' && arg != "-np") {
    *name = arg.substr(0, 2);
    *inlineValue = arg.data() + 2;
  }
}

bool parseRankCount(std::string_view name, const std::string& text, Options* options,
                    std::string* error) {
  long n = 0;
  if (!parseWholeInt(text, &n) || n < 1 || n > kMaxRanks) {
    *error = "option " + std::string(name) + " expects a rank count from 1 to " +
             std::to_string(kMaxRanks) + ", got '" + text + "'";
    return false;
  }
  options->nranks = static_cast<int>(n);
  return true;
}

bool parseTimeout(const std::string& text, Options* options, std::string* error) {
  double seconds = 0;
  if (!parseWholeDouble(text, &seconds) || seconds <= 0) {
    *error = "option --timeout expects a positive number of seconds, got '" + text + "'";
    return false;
  }
  options->timeoutSeconds = seconds;
  return true;
}

bool parseExtraEnv(const std::string& text, Options* options, std::string* error) {
  size_t eq = text.find('=');
  if (eq == 0 || eq == std::string::npos) {
    *error = "option -x expects VAR=VALUE, got '" + text + "'";
    return false;
  }
  options->extraEnv.push_back(text);
  return true;
}

}  // namespace

bool parseOptions(int argc, const char* const* argv, Options* options, std::string* error) {
  *options = Options();
  ArgCursor args(argc, argv);
  while (!args.done()) {
    std::string_view arg = args.peek();
    if (arg == "--") {
      args.advance();
      break;
    }
    // The first non-option word is the program; everything after it is its own.
    if (arg.empty() || arg[0] != '-' || arg == "-") break;
    args.advance();

    std::string_view name;
    const char* inlineValue = nullptr;
    splitOption(arg, &name, &inlineValue);
    std::string value;
    if (name == "--help" || name == "-h") {
      options->showHelp = true;
    } else if (name == "--version") {
      options->showVersion = true;
    } else if (name == "--tag-output" || name == "-t") {
      if (inlineValue != nullptr && *inlineValue != '\0') {
        *error = "option " + std::string(name) + " takes no value";
        return false;
      }
      options->tagOutput = true;
    } else if (name == "-n" || name == "--np" || name == "-np") {
      if (!args.value(name, inlineValue, &value, error) ||
          !parseRankCount(name, value, options, error)) {
        return false;
      }
    } else if (name == "--timeout") {
      if (!args.value(name, inlineValue, &value, error) || !parseTimeout(value, options, error)) {
        return false;
      }
    } else if (name == "-x") {
      if (!args.value(name, inlineValue, &value, error) || !parseExtraEnv(value, options, error)) {
        return false;
      }
    } else {
      *error = "unknown option '" + std::string(arg) + "'";
      return false;
    }
  }
  options->command = args.rest();

  // --help and --version answer without a job to run.
  if (options->showHelp || options->showVersion) return true;
  if (options->nranks == 0) {
    *error = "missing -n N: say how many ranks to start (1 to " + std::to_string(kMaxRanks) + ")";
    return false;
  }
  if (options->command.empty()) {
    *error = "missing the program to run after the options";
    return false;
  }
  return true;
}

std::string usageText() {
  return "usage: braidrun -n N [options] [--] program [args...]\n"
         "\n"
         "Starts N local ranks of `program`, each with the environment that\n"
         "braidCommInitFromEnv reads (BRAID_RANK, BRAID_NRANKS, BRAID_LOCAL_RANK,\n"
         "BRAID_LOCAL_SIZE, BRAID_ROOT, BRAID_SECRET, BRAID_JOB_TAG) and the torchrun\n"
         "names (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,\n"
         "MASTER_PORT).\n"
         "\n"
         "options:\n"
         "  -n, --np N          number of ranks, 1 to 1024 (required)\n"
         "  -t, --tag-output    prefix every line of stdout and stderr with \"[rank] \"\n"
         "      --timeout S     kill all ranks after S seconds and exit with 124\n"
         "  -x VAR=VALUE        add VAR=VALUE to every rank's environment (repeatable)\n"
         "  -h, --help          print this help\n"
         "      --version       print braidrun's version\n"
         "\n"
         "If a rank exits non-zero or dies from a signal, the others get SIGTERM and,\n"
         "3 seconds later, SIGKILL; braidrun exits with that rank's status (128+signal\n"
         "for a signal). SIGINT, SIGTERM and SIGHUP are forwarded to every rank.\n"
         "Exit status: 2 for a bad command line, 124 on --timeout, 127 if the program\n"
         "cannot be started.\n";
}

}  // namespace braid::run
