// Which NUMA node's memory holds the pages of a rank's shm segment.
//
// Rule: a FIFO lives on the node of the rank that reads it. A rank's segment
// (shm_segment.h) holds its inbound FIFOs and its control block, all of them
// read by the owner and written by peers, so the whole segment goes to the
// owner's node. Reads that miss stall a core until the line arrives from the
// other socket, while a writer's stores retire into its store buffer and drain
// across the link in the background; placing by the reader keeps the stalling
// side local. It is also what first touch gave so far when the owner ran on its
// node while it reserved the pages, made explicit: ranks that are threads of
// one process, a reserve the file system does not support (pages then fault in
// on first use, by whichever rank gets there first) and memory pressure no
// longer decide.
//
// The policy is MPOL_PREFERRED (mbind(2), raw system call, no libnuma): pages
// go to the node while it has free memory and elsewhere when it has none,
// rather than failing. It is set on the shared memory object before its pages
// are reserved, so every mapping (the peers' too) and every page follows it.
// A node braid does not know (-1: the rank may run on several nodes) binds
// nothing, and a failed mbind (no such node, a kernel without NUMA, a seccomp
// filter) leaves the pages where first touched; neither is an error.
#pragma once

#include <cstddef>
#include <vector>

#include "core/status.h"

namespace braid::transport::shm {

struct SegmentLayout;

/// One page-aligned piece of a segment and the node its pages should live on.
struct PagePlacement {
  size_t offset = 0;
  size_t bytes = 0;
  int node = -1;
};

/// Where the pieces of `owner`'s segment go when the owner runs on `ownerNode`: its control
/// block, then its inbound FIFOs in segment order (the one rank s writes at
/// layout.fifo(base, owner, s)), every one on the owner's node, whatever node the writers run
/// on. An unknown owner node (-1) gives an empty placement: nothing is bound.
std::vector<PagePlacement> segmentPlacement(const SegmentLayout& layout, int owner, int ownerNode);

/// Sets MPOL_PREFERRED to `node` on the pages of `base + p.offset` for every piece, merging
/// neighbours with one node into one call. `base` must be page aligned. An error names the
/// node and the system call's reason; pieces before the failing one stay placed.
Status applyPlacement(void* base, const std::vector<PagePlacement>& placement);

/// The node the memory policy of the mapping at `addr` prefers: -1 when its policy is not
/// MPOL_PREFERRED with exactly one node (the default policy, for instance) or on error.
int preferredNodeAt(const void* addr);

/// The node that holds the page at `addr` (which is faulted in if it is not yet); -1 on error.
int pageNodeAt(const void* addr);

}  // namespace braid::transport::shm
