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

// -x VAR=VALUE, or -x VAR for VAR's value in braidrun's own environment (as mpirun's -x),
// which ranks started through a launcher would not see otherwise.
bool parseExtraEnv(const std::string& text, Options* options, std::string* error) {
  size_t eq = text.find('=');
  if (eq == 0 || text.empty()) {
    *error = "option -x expects VAR=VALUE or VAR, got '" + text + "'";
    return false;
  }
  if (eq == std::string::npos) {
    const char* value = std::getenv(text.c_str());
    if (value == nullptr) {
      *error = "option -x " + text + ": " + text +
               " is not set in braidrun's environment (use -x VAR=VALUE)";
      return false;
    }
    options->extraEnv.push_back(text + "=" + value);
    return true;
  }
  options->extraEnv.push_back(text);
  return true;
}

bool parseRootPort(const std::string& text, Options* options, std::string* error) {
  long port = 0;
  if (!parseWholeInt(text, &port) || port < 1 || port > 65535) {
    *error = "option --root-port expects a TCP port from 1 to 65535, got '" + text + "'";
    return false;
  }
  options->rootPort = static_cast<int>(port);
  return true;
}

bool parseMapBy(const std::string& text, Options* options, std::string* error) {
  if (text == "slot") {
    options->mapBy = MapBy::kSlot;
  } else if (text == "node") {
    options->mapBy = MapBy::kNode;
  } else {
    *error = "option --map-by expects 'slot' or 'node', got '" + text + "'";
    return false;
  }
  return true;
}

// What the multi-host options say together, once all are read.
struct HostOptions {
  std::string hostList, hostFile, launcher;
  bool launcherGiven = false, launcherQuote = false, mapByGiven = false;
};

bool finishHosts(const HostOptions& given, Options* options, std::string* error) {
  if (!given.hostList.empty() && !given.hostFile.empty()) {
    *error = "give either --hosts or --hostfile, not both";
    return false;
  }
  if (given.hostList.empty() && given.hostFile.empty()) {
    const char* needsHosts = given.launcherGiven             ? "--launcher"
                             : given.launcherQuote           ? "--launcher-quote"
                             : given.mapByGiven              ? "--map-by"
                             : !options->rootAddress.empty() ? "--root-addr"
                             : options->rootPort != 0        ? "--root-port"
                                                             : nullptr;
    if (needsHosts != nullptr) {
      *error = std::string("option ") + needsHosts + " needs --hosts or --hostfile";
      return false;
    }
    return true;
  }
  if (given.hostFile.empty()) {
    if (!parseHostList(given.hostList, kMaxRanks, &options->hosts, error)) return false;
  } else if (!readHostFile(given.hostFile, kMaxRanks, &options->hosts, error)) {
    return false;
  }
  const int slots = totalRanks(options->hosts);
  if (slots > kMaxRanks) {
    *error = "the hosts (" + describeHosts(options->hosts) + ") add up to " +
             std::to_string(slots) + " ranks, more than " + std::to_string(kMaxRanks);
    return false;
  }
  if (options->nranks == 0) options->nranks = slots;  // as mpirun: one rank per slot
  if (options->nranks != slots) {
    *error = "the hosts (" + describeHosts(options->hosts) + ") add up to " +
             std::to_string(slots) + " ranks, but -n asks for " + std::to_string(options->nranks) +
             "; make the counts add up to -n";
    return false;
  }
  return parseLaunchTemplate(given.launcherGiven ? given.launcher : kDefaultLauncher,
                             given.launcherQuote, &options->launch, error);
}

}  // namespace

bool parseOptions(int argc, const char* const* argv, Options* options, std::string* error) {
  *options = Options();
  HostOptions hostOptions;
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
    } else if (name == "-H" || name == "--hosts" || name == "--host") {
      if (!args.value(name, inlineValue, &hostOptions.hostList, error)) return false;
      if (hostOptions.hostList.empty()) {
        *error = "option " + std::string(name) + " needs a host list such as a:4,b:4";
        return false;
      }
    } else if (name == "--hostfile") {
      if (!args.value(name, inlineValue, &hostOptions.hostFile, error)) return false;
      if (hostOptions.hostFile.empty()) {
        *error = "option --hostfile needs a file name";
        return false;
      }
    } else if (name == "--launcher") {
      if (!args.value(name, inlineValue, &hostOptions.launcher, error)) return false;
      hostOptions.launcherGiven = true;
    } else if (name == "--launcher-quote") {
      if (inlineValue != nullptr) {
        *error = "option --launcher-quote takes no value";
        return false;
      }
      hostOptions.launcherQuote = true;
    } else if (name == "--map-by") {
      if (!args.value(name, inlineValue, &value, error) || !parseMapBy(value, options, error)) {
        return false;
      }
      hostOptions.mapByGiven = true;
    } else if (name == "--root-addr") {
      if (!args.value(name, inlineValue, &options->rootAddress, error)) return false;
      if (options->rootAddress.empty()) {
        *error = "option --root-addr needs an address or host name";
        return false;
      }
    } else if (name == "--root-port") {
      if (!args.value(name, inlineValue, &value, error) || !parseRootPort(value, options, error)) {
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
  if (!finishHosts(hostOptions, options, error)) return false;
  if (options->nranks == 0) {
    *error = "missing -n N: say how many ranks to start (1 to " + std::to_string(kMaxRanks) +
             "), or --hosts";
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
         "       braidrun [-n N] --hosts a:4,b:4 [--launcher 'ssh {host}'] [options] [--] program\n"
         "\n"
         "Starts N ranks of `program`, each with the environment that\n"
         "braidCommInitFromEnv reads (BRAID_RANK, BRAID_NRANKS, BRAID_LOCAL_RANK,\n"
         "BRAID_LOCAL_SIZE, BRAID_ROOT, BRAID_SECRET, BRAID_JOB_TAG) and the torchrun\n"
         "names (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR,\n"
         "MASTER_PORT). Without --hosts every rank runs on this machine.\n"
         "\n"
         "options:\n"
         "  -n, --np N          number of ranks, 1 to 1024 (with --hosts: must match their sum)\n"
         "  -t, --tag-output    prefix every line of stdout and stderr with \"[rank] \"\n"
         "      --timeout S     kill all ranks after S seconds and exit with 124\n"
         "  -x VAR=VALUE        add VAR=VALUE to every rank's environment (repeatable);\n"
         "  -x VAR              pass braidrun's own value of VAR\n"
         "  -h, --help          print this help\n"
         "      --version       print braidrun's version\n"
         "\n"
         "many hosts:\n"
         "  -H, --hosts LIST    hosts and rank counts: a:4,b:4 (a bare name is one rank)\n"
         "      --hostfile F    one host per line: name, name:N or name slots=N; # comments\n"
         "      --map-by slot|node  fill each host in turn (slot, default) or deal ranks\n"
         "                      round robin over the hosts (node)\n"
         "      --launcher T    command that runs a rank on a host, {host} replaced by its\n"
         "                      name (default 'ssh {host}'); the rank's variables follow\n"
         "                      as 'env NAME=VALUE... program args'\n"
         "      --launcher-quote  quote those words for a shell on the far side (automatic\n"
         "                      for ssh and rsh)\n"
         "      --root-addr A   address the ranks reach rank 0's host at (default: this\n"
         "                      machine's address on the route to the first other host when\n"
         "                      rank 0 runs here, else rank 0's host name)\n"
         "      --root-port P   the bootstrap root's port (default: one free here)\n"
         "Ranks on localhost or this machine's own name start directly; the others through\n"
         "the launcher, which gets BRAID_* variables of braidrun's environment, the job's\n"
         "variables and -x ones on its command line.\n"
         "\n"
         "If a rank exits non-zero or dies from a signal, the others get SIGTERM and,\n"
         "3 seconds later, SIGKILL; braidrun exits with that rank's status (128+signal\n"
         "for a signal). SIGINT, SIGTERM and SIGHUP are forwarded to every rank (for a\n"
         "launched rank: to its launcher process).\n"
         "Exit status: 2 for a bad command line, 124 on --timeout, 127 if the program\n"
         "(or the launcher) cannot be started.\n";
}

}  // namespace braid::run
