// Output forwarding for --tag-output.
//
// Each rank's stdout and stderr go into their own pipe. The launcher polls the
// read ends; LineTagger cuts what arrives into whole lines and prefixes each
// with "[rank] ", and each tagged line reaches braidrun's stdout or stderr in
// one write(). So a rank that writes half a line, sleeps, and writes the rest
// still produces one line, and two ranks' halves never mix.
#pragma once

#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "braidrun/unique_fd.h"

namespace braid::run {

/// Splits one stream into lines and prefixes each with a tag. Pure logic.
class LineTagger {
 public:
  /// A line longer than `maxLineBytes` is cut there, so that a rank writing
  /// megabytes without a newline cannot make braidrun buffer without bound.
  explicit LineTagger(std::string tag, size_t maxLineBytes = 64 << 10)
      : tag_(std::move(tag)), maxLineBytes_(maxLineBytes) {}

  /// Appends to *out every line that `data` completes, tagged, with its '\n'.
  void feed(std::string_view data, std::string* out);

  /// End of stream: a last line without '\n' is emitted with one added.
  void finish(std::string* out);

 private:
  void emit(std::string_view line, std::string* out) const;

  std::string tag_;
  size_t maxLineBytes_;
  std::string partial_;  // bytes after the last '\n' seen
};

/// The write ends a child dups onto its fds 1 and 2.
struct ChildOutput {
  UniqueFd stdoutWrite;
  UniqueFd stderrWrite;
};

class OutputForwarder {
 public:
  /// Tagged lines go to `stdoutFd` and `stderrFd`, which the forwarder does not own.
  explicit OutputForwarder(int stdoutFd = STDOUT_FILENO, int stderrFd = STDERR_FILENO)
      : sinkFds_{stdoutFd, stderrFd} {}

  /// Makes the two pipes of `rank` and returns their write ends for the child.
  bool openRank(int rank, ChildOutput* child, std::string* error);

  /// Appends one pollfd per stream that has not reached end of file yet.
  void addPollFds(std::vector<pollfd>* fds);

  /// Given the pollfds that the last addPollFds added (same order, with
  /// revents filled in), reads what is ready and forwards complete lines.
  void service(const pollfd* fds, size_t count);

  /// True once every stream has reached end of file.
  bool allClosed() const;

  /// Forwards what the pipes still hold after the ranks have exited, until
  /// every stream reaches end of file or `deadline` passes (a grandchild that
  /// escaped the process group may keep a pipe open forever).
  void drain(std::chrono::steady_clock::time_point deadline);

 private:
  struct Stream {
    UniqueFd readEnd;
    int sinkIndex;  // 0: stdout, 1: stderr
    LineTagger tagger;
  };

  void readFrom(Stream* stream);
  void closeStream(Stream* stream);
  void writeToSink(int sinkIndex, const std::string& data);

  int sinkFds_[2];
  bool sinkBroken_[2] = {false, false};  // reader went away: drop, but keep draining
  std::vector<Stream> streams_;
  std::vector<size_t> polled_;  // index in streams_ of each pollfd of the last addPollFds
};

}  // namespace braid::run
