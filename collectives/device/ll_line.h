// The LL ("low latency") wire format: data and flag together in single-copy-atomic words.
//
// A 16-byte line holds two 8-byte words; each word is 4 bytes of data (low half) and a 4-byte
// flag (high half). A line therefore carries 8 bytes of payload. The writer stores a whole
// line at once (two atomic halves); the reader polls the line until both flags equal the
// flag it expects, and then the data beside them is the data written with them — no fence
// and no separate "ready" counter, which is what makes LL fast for small messages.
//
// Flags: the n-th use of any slot (n = 0, 1, ...) is stamped with llFlag(n), never 0 (so
// zeroed memory is never mistaken for data) and different from the stamp of that slot's
// previous use (n - slots), so slots are never reset. Flags cycle through 1 .. 2^32-1.
#pragma once

#include <cstdint>

#include "collectives/device/portability.h"

namespace braid::device {

/// The flag for the `sequence`-th slot written on a FIFO (cycles through 1 .. 2^32 - 1).
BRAID_HD uint32_t llFlag(uint64_t sequence) { return uint32_t(1 + sequence % 0xffffffffull); }

/// One 8-byte LL word: 4 data bytes in the low half, the flag in the high half.
BRAID_HD uint64_t llWord(uint32_t data, uint32_t flag) { return (uint64_t(flag) << 32) | data; }
BRAID_HD uint32_t llData(uint64_t word) { return uint32_t(word); }
BRAID_HD uint32_t llFlagOf(uint64_t word) { return uint32_t(word >> 32); }

/// The two words of a line carrying the 8 payload bytes `payload` (little-endian halves).
BRAID_HD void llPackLine(uint64_t payload, uint32_t flag, uint64_t* word0, uint64_t* word1) {
  *word0 = llWord(uint32_t(payload), flag);
  *word1 = llWord(uint32_t(payload >> 32), flag);
}

/// The payload of a line whose words both carry `flag`; false when either does not (yet).
BRAID_HD bool llUnpackLine(uint64_t word0, uint64_t word1, uint32_t flag, uint64_t* payload) {
  if (llFlagOf(word0) != flag || llFlagOf(word1) != flag) return false;
  *payload = (uint64_t(llData(word1)) << 32) | llData(word0);
  return true;
}

}  // namespace braid::device
