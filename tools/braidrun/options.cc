#include "braidrun/options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string_view>

#include "tools/cli/cli.h"

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

// What the command line says, as CLI11 reads it; the values are checked afterwards by the
// helpers above, so that every refusal names the option and what it expects.
struct RawOptions {
  std::string ranks, timeout, hostList, hostFile, launcher, mapBy, rootAddress, rootPort;
  std::vector<std::string> extraEnv;
  bool tagOutput = false, launcherQuote = false, version = false;
  CLI::Option *ranksGiven, *timeoutGiven, *hostListGiven, *hostFileGiven, *launcherGiven,
      *mapByGiven, *rootAddressGiven, *rootPortGiven;
};

constexpr const char* kUsage =
    "usage: braidrun -n N [options] [--] program [args...]\n"
    "       braidrun [-n N] --hosts a:4,b:4 [--launcher 'ssh {host}'] [options] [--] program";

constexpr const char* kDescription =
    "Starts N ranks of `program`, each with the environment that\n"
    "braidCommInitFromEnv reads (BRAID_RANK, BRAID_NRANKS, BRAID_LOCAL_RANK,\n"
    "BRAID_LOCAL_SIZE, BRAID_ROOT, BRAID_SECRET, BRAID_JOB_TAG) and the torchrun\n"
    "names (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR,\n"
    "MASTER_PORT). Without --hosts every rank runs on this machine. The first word\n"
    "that is not an option (or everything after --) is the program; it and its\n"
    "arguments are passed on untouched.";

constexpr const char* kFooter =
    "Ranks on localhost or this machine's own name start directly; the others through\n"
    "the launcher, which gets BRAID_* variables of braidrun's environment, the job's\n"
    "variables and -x ones on its command line.\n"
    "\n"
    "If a rank exits non-zero or dies from a signal, the others get SIGTERM and,\n"
    "3 seconds later, SIGKILL; braidrun exits with that rank's status (128+signal\n"
    "for a signal). SIGINT, SIGTERM and SIGHUP are forwarded to every rank (for a\n"
    "launched rank: to its launcher process).\n"
    "Exit status: 2 for a bad command line, 124 on --timeout, 127 if the program\n"
    "(or the launcher) cannot be started.";

std::unique_ptr<CLI::App> makeApp(RawOptions* raw) {
  auto app = std::make_unique<CLI::App>(kDescription, "braidrun");
  // The program and its arguments are not braidrun's: parsing stops at the first word that is
  // not an option (or at --), and the rest is left for the program.
  cli::setUsage(*app, kUsage);
  app->prefix_command();
  app->footer(kFooter);
  app->set_help_flag("-h,--help", "print this help");
  // A repeated option takes its last value, as getopt-based launchers do.
  app->option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  raw->ranksGiven = app->add_option("-n,--np", raw->ranks,
                                    "number of ranks, 1 to 1024 (with --hosts: must match their "
                                    "sum); -np N as mpirun's");
  app->add_flag("-t,--tag-output", raw->tagOutput,
                "prefix every line of stdout and stderr with \"[rank] \"")
      ->disable_flag_override();
  raw->timeoutGiven = app->add_option("--timeout", raw->timeout,
                                      "kill all ranks after S seconds and exit with 124");
  app->add_option("-x", raw->extraEnv,
                  "VAR=VALUE: add it to every rank's environment (repeatable); VAR alone passes "
                  "braidrun's own value of VAR")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app->add_flag("--version", raw->version, "print braidrun's version")->disable_flag_override();
  const char* hosts = "Many hosts";
  raw->hostListGiven = app->add_option("-H,--hosts,--host", raw->hostList,
                                       "hosts and rank counts: a:4,b:4 (a bare name is one rank)")
                           ->group(hosts);
  raw->hostFileGiven =
      app->add_option("--hostfile", raw->hostFile,
                      "one host per line: name, name:N or name slots=N; # comments")
          ->group(hosts);
  raw->mapByGiven = app->add_option("--map-by", raw->mapBy,
                                    "fill each host in turn (slot, default) or deal "
                                    "ranks round robin over the hosts (node)")
                        ->group(hosts);
  raw->launcherGiven =
      app->add_option("--launcher", raw->launcher,
                      "command that runs a rank on a host, {host} replaced by its name (default "
                      "'ssh {host}'); the rank's variables follow as 'env NAME=VALUE... program "
                      "args'")
          ->group(hosts);
  app->add_flag("--launcher-quote", raw->launcherQuote,
                "quote those words for a shell on the far side (automatic for ssh and rsh)")
      ->disable_flag_override()
      ->group(hosts);
  raw->rootAddressGiven =
      app->add_option("--root-addr", raw->rootAddress,
                      "address the ranks reach rank 0's host at (default: this machine's address "
                      "on the route to the first other host when rank 0 runs here, else rank 0's "
                      "host name)")
          ->group(hosts);
  raw->rootPortGiven = app->add_option("--root-port", raw->rootPort,
                                       "the bootstrap root's port (default: one free "
                                       "here)")
                           ->group(hosts);
  // The value names the help shows (CLI11 would say TEXT, as every value is a string here).
  const std::pair<const char*, const char*> valueNames[] = {
      {"-n", "N"},         {"--timeout", "S"},   {"-x", "VAR[=VALUE]"},
      {"--hosts", "LIST"}, {"--hostfile", "F"},  {"--map-by", "slot|node"},
      {"--launcher", "T"}, {"--root-addr", "A"}, {"--root-port", "P"}};
  for (const auto& [option, valueName] : valueNames) app->get_option(option)->type_name(valueName);
  return app;
}

// braidrun's own arguments, for CLI11 in its reversed order. mpirun spells the rank count
// "-np N", which CLI11 (as getopt) would read as "-n p": among braidrun's own options, before
// the program, it becomes "--np". A value given to a flag ("--tag-output=yes") is refused here
// with the flag's name.
bool ownArguments(const CLI::App& app, int argc, const char* const* argv,
                  std::vector<std::string>* args, std::string* error) {
  args->assign(argv + 1, argv + argc);
  for (size_t i = 0; i < args->size(); ++i) {
    std::string& arg = (*args)[i];
    if (arg == "--" || arg.size() < 2 || arg[0] != '-') break;  // the program starts here
    if (arg == "-np") arg = "--np";
    const CLI::Option* option = app.get_option_no_throw(arg.substr(0, arg.find('=')));
    if (option == nullptr) continue;
    if (option->get_expected_max() == 0 && arg.find('=') != std::string::npos) {
      *error = "option " + arg.substr(0, arg.find('=')) + " takes no value";
      return false;
    }
    // An option whose value is the next word: skip that word, whatever it looks like.
    if (option->get_expected_min() > 0 && arg.find('=') == std::string::npos) ++i;
  }
  std::reverse(args->begin(), args->end());
  return true;
}

// Checks each value CLI11 collected, in the order of the options' table.
bool checkValues(const RawOptions& raw, HostOptions* hostOptions, Options* options,
                 std::string* error) {
  if (raw.ranksGiven->count() > 0 && !parseRankCount("-n", raw.ranks, options, error)) {
    return false;
  }
  options->tagOutput = raw.tagOutput;
  if (raw.timeoutGiven->count() > 0 && !parseTimeout(raw.timeout, options, error)) return false;
  for (const std::string& variable : raw.extraEnv) {
    if (!parseExtraEnv(variable, options, error)) return false;
  }
  if (raw.hostListGiven->count() > 0 && raw.hostList.empty()) {
    *error = "option --hosts needs a host list such as a:4,b:4";
    return false;
  }
  if (raw.hostFileGiven->count() > 0 && raw.hostFile.empty()) {
    *error = "option --hostfile needs a file name";
    return false;
  }
  if (raw.mapByGiven->count() > 0 && !parseMapBy(raw.mapBy, options, error)) return false;
  if (raw.rootAddressGiven->count() > 0 && raw.rootAddress.empty()) {
    *error = "option --root-addr needs an address or host name";
    return false;
  }
  options->rootAddress = raw.rootAddress;
  if (raw.rootPortGiven->count() > 0 && !parseRootPort(raw.rootPort, options, error)) {
    return false;
  }
  hostOptions->hostList = raw.hostList;
  hostOptions->hostFile = raw.hostFile;
  hostOptions->launcher = raw.launcher;
  hostOptions->launcherGiven = raw.launcherGiven->count() > 0;
  hostOptions->launcherQuote = raw.launcherQuote;
  hostOptions->mapByGiven = raw.mapByGiven->count() > 0;
  return true;
}

}  // namespace

bool parseOptions(int argc, const char* const* argv, Options* options, std::string* error) {
  *options = Options();
  RawOptions raw;
  std::unique_ptr<CLI::App> app = makeApp(&raw);
  std::vector<std::string> args;
  if (!ownArguments(*app, argc, argv, &args, error)) return false;
  try {
    app->parse(std::move(args));
  } catch (const CLI::CallForHelp&) {
    options->showHelp = true;  // answers without a job to run
    return true;
  } catch (const CLI::ParseError& e) {
    *error = e.what();
    return false;
  }
  std::vector<std::string> rest = app->remaining();
  // What CLI11 could not place: an unknown option (it stops there), or the "--" that ends
  // braidrun's options, or the program with everything after it.
  if (!rest.empty() && rest[0].size() > 1 && rest[0][0] == '-' && rest[0] != "--") {
    *error = "unknown option '" + rest[0] + "'";
    return false;
  }
  if (!rest.empty() && rest[0] == "--") rest.erase(rest.begin());
  options->command = std::move(rest);
  if (raw.version) {
    options->showVersion = true;
    return true;
  }
  HostOptions hostOptions;
  if (!checkValues(raw, &hostOptions, options, error)) return false;
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
  RawOptions raw;
  return makeApp(&raw)->help();
}

}  // namespace braid::run
