// Communicator handles: what a braidComm_t is, and how a call proves it is live.
//
// A braidComm_t is not the address of the communicator. It is a token: a slot index in a
// process-wide table, the slot's generation, and a tag byte. Why not a pointer with a
// magic word in the object: reading a magic word from freed or garbage memory is itself
// undefined behaviour, so such a check can crash (or pass) exactly when it matters. Here the
// table's slots live in chunks that are never freed, so any token value is checked with
// arithmetic (tag, index in range) and one read of memory that stays allocated (the slot's
// word: generation plus a live bit, the "magic word" that retiring clears). A garbage
// handle, a handle used after braidCommDestroy, and a second destroy are all answered with
// braidInvalidArgument and a sentence; a freed slot is reused under the next generation, so
// an old token never reaches a new communicator.
//
// Lifetime. Each C call on a communicator holds a Lease for its whole length: it counts
// itself in the slot, then checks the word (in that order, both sequentially consistent).
// Retiring (destroy, abort, finalize's failure path) first clears the live bit, so no later
// lease succeeds, then waits until the slot's count and the communicator's own in-flight
// count are zero before it frees the communicator. A call therefore never runs on a freed
// communicator; if calls stay inside past the deadline, the communicator is leaked (with a
// warning), never freed under them.
#pragma once

#include <functional>
#include <memory>

#include "braid.h"
#include "core/status.h"

namespace braid {

class Comm;
struct HandleSlot;

/// Makes `comm` reachable from C: a new live token owns it until releaseComm.
braidComm_t publishComm(std::unique_ptr<Comm> comm);

/// Creates a communicator with `join` later (non-blocking init, init inside a group): the
/// handle is live at once, calls on it fail with braidInvalidUsage until `join` has
/// succeeded, and initState() tells how far it is. Null when the table is full.
using JoinFn = std::function<Result<std::unique_ptr<Comm>>()>;
braidComm_t publishPending(JoinFn join);
/// Starts a pending handle's join on a thread of its own (once; later calls do nothing).
Status startJoin(braidComm_t handle);
/// Ends a pending handle's join before it starts: calls on the handle then fail with `why`
/// (braidCommDestroy frees it). Nothing for a join already started.
void abandonJoin(braidComm_t handle, const Status& why);
/// Waits until a started join has ended; its result.
Status waitJoin(braidComm_t handle);
/// braidInProgress while the join runs (or waits to start), its error if it failed, Ok once
/// the communicator is ready; braidInvalidArgument for a handle that is not live.
Status initState(braidComm_t handle, const char* api);

/// Holds `handle`'s communicator alive for one call (RAII; not copyable).
class Lease {
 public:
  explicit Lease(braidComm_t handle);
  ~Lease();
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;

  /// The communicator, or null when the handle is NULL or not live.
  Comm* comm() const { return comm_; }
  /// Why comm() is null, as a sentence starting with `api`.
  Status error(const char* api) const;

 private:
  braidComm_t handle_;
  bool pending_ = false;        // live, but its join has not succeeded (yet)
  HandleSlot* slot_ = nullptr;  // counted while comm_ is set; slots are never freed
  Comm* comm_ = nullptr;
};

/// How releaseComm treats calls still inside the communicator.
enum class Release {
  kWait,   // braidCommDestroy: let them finish (bounded), then abort them
  kAbort,  // braidCommAbort: abort them at once, then wait for them to leave
};

/// Retires `handle` (later calls with it fail) and frees its communicator once no call is
/// inside it. An error, naming `api`, when the handle is NULL-less garbage or already
/// retired. NULL is accepted (as NCCL's destroy does) and does nothing.
Status releaseComm(braidComm_t handle, const char* api, Release how);

/// The communicator of a live handle without a lease, or null: for tests and for code that
/// already holds a lease on it.
Comm* peekComm(braidComm_t handle);

}  // namespace braid
