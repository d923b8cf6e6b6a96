#include "comm/flight_recorder.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "core/log.h"
#include "core/types.h"

namespace braid {
namespace {

constexpr int kDefaultEntries = 64;
constexpr int kMaxEntries = 4096;

int entriesFromEnv() {
  const char* v = std::getenv("BRAID_FLIGHT_RECORDER");
  if (v == nullptr || *v == '\0') return kDefaultEntries;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 0) {
    BRAID_WARN("BRAID_FLIGHT_RECORDER=%s is not a count of entries; using %d", v, kDefaultEntries);
    return kDefaultEntries;
  }
  return static_cast<int>(n > kMaxEntries ? kMaxEntries : n);
}

bool isTransfer(const coll::Action& a) { return a.peer >= 0; }

}  // namespace

FlightRecorder::FlightRecorder(int rank, int nranks) : rank_(rank), nranks_(nranks) {
  ring_.resize(entriesFromEnv());
}

void FlightRecorder::begin(const Op& first, int batchOps, bool signatureCheck,
                           const Schedules& schedules) {
  if (ring_.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = ring_[next_ % ring_.size()];
  e.seq = next_++;
  e.api = first.apiName;
  e.count = first.count;
  e.type = first.type;
  e.op = first.op;
  e.root = first.kind == OpKind::kCollective ? first.root : first.peer;
  e.collective = first.kind == OpKind::kCollective;
  e.kind = first.coll;
  e.signatureCheck = signatureCheck;
  e.batchOps = batchOps;
  e.state = State::kRunning;
  e.waited = false;
  e.schedules.assign(schedules.begin(), schedules.end());
  e.stepIndex.assign(schedules.size(), 0);
  e.moved.clear();
  e.error.clear();
}

void FlightRecorder::snapshot(const Runners& runners) {
  if (ring_.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (next_ == 0) return;
  Entry& e = ring_[(next_ - 1) % ring_.size()];
  if (e.state != State::kRunning || runners.size() != e.schedules.size()) return;
  if (!e.waited) e.waitingSince = Clock::now();
  e.waited = true;
  e.moved.clear();
  for (size_t r = 0; r < runners.size(); ++r) {
    const size_t step = runners[r]->stepIndex();
    e.stepIndex[r] = step;
    if (step >= e.schedules[r]->steps.size()) continue;
    for (size_t i = 0; i < e.schedules[r]->steps[step].actions.size(); ++i) {
      e.moved.push_back(runners[r]->movedBytes(i));
    }
  }
}

void FlightRecorder::end(const Status& error) {
  if (ring_.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (next_ == 0) return;
  Entry& e = ring_[(next_ - 1) % ring_.size()];
  if (e.state != State::kRunning) return;
  if (error.isOk()) {
    e.state = State::kDone;
    for (size_t r = 0; r < e.schedules.size(); ++r) e.stepIndex[r] = e.schedules[r]->steps.size();
    e.moved.clear();
  } else {
    e.state = State::kFailed;
    e.ended = Clock::now();
    e.error = error.message();
  }
}

// Bytes per peer: whole transfers of the steps before the snapshot's, the
// snapshot's partial counts within it. A running or failed stage's pending
// transfers are marked, since they name the peer that did not progress.
std::vector<FlightRecorder::PeerBytes> FlightRecorder::peerBytes(const Entry& e) const {
  std::map<int, PeerBytes> peers;
  size_t movedAt = 0;
  for (size_t r = 0; r < e.schedules.size(); ++r) {
    const coll::Schedule& s = *e.schedules[r];
    for (size_t k = 0; k < s.steps.size(); ++k) {
      const bool current = k == e.stepIndex[r];
      for (size_t i = 0; i < s.steps[k].actions.size(); ++i) {
        const coll::Action& a = s.steps[k].actions[i];
        const size_t at = movedAt + i;
        if (!isTransfer(a)) continue;
        PeerBytes& p = peers.try_emplace(a.peer, PeerBytes{a.peer}).first->second;
        const bool isSend = a.kind == coll::ActionKind::kSend;
        const uint64_t total = isSend ? a.src.bytes : a.dst.bytes;
        uint64_t moved = k < e.stepIndex[r] ? total : 0;
        if (current) moved = at < e.moved.size() ? e.moved[at] : 0;
        (isSend ? p.sendTotal : p.recvTotal) += total;
        (isSend ? p.sent : p.recv) += moved;
        if (current && moved < total) (isSend ? p.waitingSend : p.waitingRecv) = true;
      }
      if (current) movedAt += s.steps[k].actions.size();
    }
  }
  std::vector<PeerBytes> out;
  for (auto& [peer, bytes] : peers) out.push_back(bytes);
  return out;
}

std::string FlightRecorder::describe(const Entry& e, Clock::time_point now) const {
  char head[256];
  size_t steps = 0, stepsDone = 0;
  for (size_t r = 0; r < e.schedules.size(); ++r) {
    steps += e.schedules[r]->steps.size();
    stepsDone += std::min(e.stepIndex[r], e.schedules[r]->steps.size());
  }
  const char* state = e.state == State::kDone     ? "done"
                      : e.state == State::kFailed ? "FAILED"
                                                  : "RUNNING";
  // Time is read only once a stage waits (the sleep path), never on the busy path.
  char waited[64] = "";
  if (e.waited && e.state != State::kDone) {
    const auto until = e.state == State::kRunning ? now : e.ended;
    std::snprintf(waited, sizeof(waited), ", waiting %.1f ms",
                  std::chrono::duration<double, std::milli>(until - e.waitingSince).count());
  }
  const std::string algorithm = e.schedules.empty() ? "none" : e.schedules[0]->algorithm;
  if (e.collective) {
    using coll::CollKind;
    const bool reduces = e.kind == CollKind::kAllReduce || e.kind == CollKind::kReduce ||
                         e.kind == CollKind::kReduceScatter;
    const bool rooted = e.kind == CollKind::kBroadcast || e.kind == CollKind::kReduce ||
                        e.kind == CollKind::kGather || e.kind == CollKind::kScatter;
    std::string args = std::string(typeName(e.type)) + (reduces ? " " : "") +
                       (reduces ? opName(e.op) : "") +
                       (rooted ? " root " + std::to_string(e.root) : "");
    std::snprintf(head, sizeof(head), "#%llu %s%s %s count %zu %s: %s, steps done %zu/%zu%s",
                  static_cast<unsigned long long>(e.seq), e.api,
                  e.signatureCheck ? " (BRAID_CHECK signatures)" : "", algorithm.c_str(), e.count,
                  args.c_str(), state, stepsDone, steps, waited);
  } else {
    std::snprintf(head, sizeof(head),
                  "#%llu send/recv batch of %d (first: %s peer %d count %zu %s): %s, "
                  "steps done %zu/%zu%s",
                  static_cast<unsigned long long>(e.seq), e.batchOps, e.api, e.root, e.count,
                  typeName(e.type), state, stepsDone, steps, waited);
  }
  std::string line = head;
  if (!e.error.empty()) line += "; error: " + e.error;
  return line;
}

// One line per peer of a stage that did not complete: bytes moved and owed,
// and which transfers the stage was still waiting for.
std::vector<std::string> FlightRecorder::describePeers(const Entry& e) const {
  std::vector<std::string> lines;
  if (e.state == State::kDone) return lines;
  for (const PeerBytes& p : peerBytes(e)) {
    char part[200];
    std::snprintf(
        part, sizeof(part), "    peer %d: sent %llu/%llu B, received %llu/%llu B", p.peer,
        static_cast<unsigned long long>(p.sent), static_cast<unsigned long long>(p.sendTotal),
        static_cast<unsigned long long>(p.recv), static_cast<unsigned long long>(p.recvTotal));
    std::string line = part;
    if (p.waitingRecv) line += ", waiting to receive from rank " + std::to_string(p.peer);
    if (p.waitingSend) line += ", waiting to send to rank " + std::to_string(p.peer);
    lines.push_back(std::move(line));
  }
  return lines;
}

std::vector<std::string> FlightRecorder::format(const std::string& why) const {
  std::lock_guard<std::mutex> lock(mu_);
  const uint64_t size = ring_.size();
  const uint64_t first = next_ > size ? next_ - size : 0;
  std::vector<std::string> lines;
  lines.push_back("flight recorder, rank " + std::to_string(rank_) + " of " +
                  std::to_string(nranks_) + " (" + why + "): last " +
                  std::to_string(next_ - first) + " of " + std::to_string(next_) + " stages");
  const Clock::time_point now = Clock::now();
  for (uint64_t seq = first; seq < next_; ++seq) {
    const Entry& e = ring_[seq % size];
    lines.push_back("flight recorder, rank " + std::to_string(rank_) + ": " + describe(e, now));
    for (std::string& peer : describePeers(e)) {
      lines.push_back("flight recorder, rank " + std::to_string(rank_) + ": " + peer);
    }
  }
  return lines;
}

void FlightRecorder::print(const std::string& why, bool always) const {
  const bool toLog = logLevel() >= LogLevel::kWarn;
  if (!toLog && !always) return;
  for (const std::string& line : format(why)) {
    if (toLog) {
      BRAID_WARN("%s", line.c_str());
    } else {
      std::fprintf(stderr, "[braid] %s\n", line.c_str());
    }
  }
}

}  // namespace braid
