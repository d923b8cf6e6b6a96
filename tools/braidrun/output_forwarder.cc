#include "braidrun/output_forwarder.h"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

namespace braid::run {

void LineTagger::feed(std::string_view data, std::string* out) {
  while (!data.empty()) {
    size_t newline = data.find('\n');
    if (newline == std::string_view::npos) {
      size_t room = maxLineBytes_ > partial_.size() ? maxLineBytes_ - partial_.size() : 0;
      if (data.size() < room) {
        partial_.append(data);
        return;
      }
      // Over the cap: emit the first maxLineBytes_ as a line of its own.
      partial_.append(data.substr(0, room));
      emit(partial_, out);
      partial_.clear();
      data.remove_prefix(room);
      continue;
    }
    partial_.append(data.substr(0, newline));
    emit(partial_, out);
    partial_.clear();
    data.remove_prefix(newline + 1);
  }
}

void LineTagger::finish(std::string* out) {
  if (partial_.empty()) return;
  emit(partial_, out);
  partial_.clear();
}

void LineTagger::emit(std::string_view line, std::string* out) const {
  out->append(tag_);
  out->append(line);
  out->push_back('\n');
}

bool OutputForwarder::openRank(int rank, ChildOutput* child, std::string* error) {
  std::string tag = "[" + std::to_string(rank) + "] ";
  UniqueFd* writeEnds[2] = {&child->stdoutWrite, &child->stderrWrite};
  for (int sink = 0; sink < 2; ++sink) {
    int fds[2];
    // Both ends close-on-exec: the child dup2()s its write end onto fd 1 or 2
    // (which clears the flag), and no other rank may inherit it, or this
    // stream would not see end of file until that other rank exits too.
    if (::pipe2(fds, O_CLOEXEC) != 0) {
      *error = "cannot create an output pipe for rank " + std::to_string(rank) + ": " +
               std::strerror(errno);
      return false;
    }
    // Non-blocking so that a spurious wakeup never stalls the whole loop on one rank.
    ::fcntl(fds[0], F_SETFL, ::fcntl(fds[0], F_GETFL) | O_NONBLOCK);
    streams_.push_back(Stream{UniqueFd(fds[0]), sink, LineTagger(tag)});
    writeEnds[sink]->reset(fds[1]);
  }
  return true;
}

void OutputForwarder::addPollFds(std::vector<pollfd>* fds) {
  polled_.clear();
  for (size_t i = 0; i < streams_.size(); ++i) {
    if (!streams_[i].readEnd.valid()) continue;
    fds->push_back(pollfd{streams_[i].readEnd.get(), POLLIN, 0});
    polled_.push_back(i);
  }
}

void OutputForwarder::service(const pollfd* fds, size_t count) {
  for (size_t i = 0; i < count && i < polled_.size(); ++i) {
    // POLLHUP without POLLIN still needs a read(): it returns 0, which is how
    // the stream learns it has ended.
    if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) readFrom(&streams_[polled_[i]]);
  }
}

bool OutputForwarder::allClosed() const {
  for (const Stream& stream : streams_) {
    if (stream.readEnd.valid()) return false;
  }
  return true;
}

void OutputForwarder::drain(std::chrono::steady_clock::time_point deadline) {
  using std::chrono::steady_clock;
  while (!allClosed()) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady_clock::now());
    if (left.count() <= 0) break;
    std::vector<pollfd> fds;
    addPollFds(&fds);
    int ready = ::poll(fds.data(), fds.size(), static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) break;
    if (ready > 0) service(fds.data(), fds.size());
  }
  // Whatever is still open belongs to an escaped grandchild: flush the halves
  // of lines already read so that nothing the ranks wrote is lost.
  for (Stream& stream : streams_) {
    if (stream.readEnd.valid()) closeStream(&stream);
  }
}

void OutputForwarder::readFrom(Stream* stream) {
  char buffer[64 << 10];
  ssize_t n = ::read(stream->readEnd.get(), buffer, sizeof(buffer));
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    closeStream(stream);
    return;
  }
  std::string lines;
  stream->tagger.feed(std::string_view(buffer, static_cast<size_t>(n)), &lines);
  writeToSink(stream->sinkIndex, lines);
}

void OutputForwarder::closeStream(Stream* stream) {
  std::string rest;
  stream->tagger.finish(&rest);
  writeToSink(stream->sinkIndex, rest);
  stream->readEnd.reset();
}

void OutputForwarder::writeToSink(int sinkIndex, const std::string& data) {
  size_t done = 0;
  while (done < data.size() && !sinkBroken_[sinkIndex]) {
    ssize_t n = ::write(sinkFds_[sinkIndex], data.data() + done, data.size() - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else if (n < 0 && errno == EAGAIN) {
      // Our stdout was handed to us non-blocking; wait until it drains.
      pollfd writable{sinkFds_[sinkIndex], POLLOUT, 0};
      ::poll(&writable, 1, -1);
    } else {
      // EPIPE and friends: nobody reads our output any more. Keep reading the
      // ranks' pipes regardless, so that they never block on a full pipe.
      sinkBroken_[sinkIndex] = true;
    }
  }
}

}  // namespace braid::run
