// The --launcher command template: how braidrun starts a rank on another host.
//
// The template is a command line with {host} where the host's name goes, e.g.
// "ssh {host}" (the default), "ssh -p 2222 {host}", "ip netns exec {host}" or,
// for tests on one machine, "env BRAID_HOST_ID={host}". It is split into words
// as a shell would (blanks separate, '...' and "..." quote, \ escapes), but no
// shell runs it. A rank's command line is the template's words followed by
//     env NAME=VALUE ... program args...
// because the launcher, not braidrun, creates the rank's process: the job's
// variables must travel on the command line. ssh and rsh hand their arguments
// to a shell on the far side, so for them (or with --launcher-quote) every word
// after the template is quoted for a POSIX shell; other launchers exec argv as
// given and get the words as they are.
#pragma once

#include <string>
#include <vector>

namespace braid::run {

struct LaunchTemplate {
  std::vector<std::string> words;  // split, {host} not yet replaced
  bool remoteShell = false;        // quote the rank's words for the far side's shell
};

/// Splits `text`. False with *error set when it is empty, has an unterminated quote
/// or does not contain {host}. `forceQuote` sets remoteShell for any launcher.
bool parseLaunchTemplate(const std::string& text, bool forceQuote, LaunchTemplate* launch,
                         std::string* error);

/// The full argv that starts one rank on `host`: the template with {host} replaced,
/// then "env", `env` (NAME=VALUE) and `command`, quoted when launch.remoteShell.
std::vector<std::string> launchArgv(const LaunchTemplate& launch, const std::string& host,
                                    const std::vector<std::string>& env,
                                    const std::vector<std::string>& command);

/// `word` as one word for a POSIX shell: unchanged when it holds only safe
/// characters, else in single quotes (a ' inside becomes '\'').
std::string shellQuote(const std::string& word);

}  // namespace braid::run
