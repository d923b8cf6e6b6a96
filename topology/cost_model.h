// The cost model: how long a collective takes with a given algorithm, protocol and link.
//
//   time = overhead + steps(n) * stepLatency + wireBytes(n, S) / bandwidth
//
// steps and wireBytes are the algorithm's *shape* (its critical path: sequential
// message steps, and bytes one rank sends along it), fixed by the algorithm alone;
// overhead, stepLatency and bandwidth are *constants* per (collective, algorithm,
// protocol, link), calibrated from measurements (topology/calibration/) for the CPU
// links and set from published link speeds for GPU links (sim.h). S is the size as
// nccl-tests and braid-perf report it: the per-rank buffer for all-reduce, broadcast
// and reduce; the whole gathered/scattered buffer for the others.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/coll_kind.h"

namespace braid::topo {

enum class Protocol { kSimple, kLL, kLL128 };
/// "simple", "ll", "ll128".
const char* protocolName(Protocol protocol);
/// The protocol called `name`, if any.
std::optional<Protocol> protocolFromName(const std::string& name);

/// The collective called `name` ("allreduce", "reducescatter"...; collName's spelling).
std::optional<coll::CollKind> collKindFromName(const std::string& name);

struct Shape {
  double steps = 0;      // sequential message steps on the critical path
  double wireBytes = 0;  // bytes one rank sends along it
};

/// The shape of `algorithm` for `kind` on n ranks and size S; nullopt for unknown pairs.
std::optional<Shape> shapeOf(coll::CollKind kind, const std::string& algorithm, int nranks,
                             double sizeBytes);

/// S (nccl-tests' size) for a call with `countBytes` per rank (CollArgs::count * type size).
double reportedSize(coll::CollKind kind, double countBytes, int nranks);

struct CostParams {
  double overheadUs = 0;
  double stepUs = 0;
  double gbps = 1;  // GB/s = 1e3 bytes per microsecond
};

struct CostEntry {
  coll::CollKind kind;
  std::string algorithm;
  Protocol protocol;
  std::string link;  // "shm", "socket", "nvlink", "pcie", "net"
  CostParams params;
};

class CostModel {
 public:
  CostModel() = default;
  explicit CostModel(std::vector<CostEntry> entries) : entries_(std::move(entries)) {}

  /// The constants braid was calibrated with on its development machine (shm and socket).
  static const CostModel& calibrated();

  void set(const CostEntry& entry);
  const CostParams* find(coll::CollKind kind, const std::string& algorithm, Protocol protocol,
                         const std::string& link) const;
  /// Predicted microseconds, or nullopt when the model has no constants for this case.
  std::optional<double> predictUs(coll::CollKind kind, const std::string& algorithm,
                                  Protocol protocol, const std::string& link, int nranks,
                                  double sizeBytes) const;
  const std::vector<CostEntry>& entries() const { return entries_; }

 private:
  std::vector<CostEntry> entries_;
};

/// time for a shape with given constants (the formula above).
double timeUs(const Shape& shape, const CostParams& params);

}  // namespace braid::topo
