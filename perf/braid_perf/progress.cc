#include "progress.h"

#include <unistd.h>

#include "collective.h"
#include "types.h"

namespace braid::perf {

Progress::Progress(bool isRankZero, size_t totalRows)
    : out_(isRankZero && isatty(STDERR_FILENO) ? stderr : nullptr), totalRows_(totalRows) {}

Progress::~Progress() { finish(); }

void Progress::rowDone(const Measurement& row) {
  ++doneRows_;
  if (out_ == nullptr) return;
  // "\033[K" clears what a longer previous line left behind.
  std::fprintf(out_, "\r[%s %s", collectiveInfo(row.kind).name, typeName(row.type));
  if (row.op) std::fprintf(out_, " %s", opName(*row.op));
  if (row.root >= 0) std::fprintf(out_, " root %d", row.root);
  std::fprintf(out_, " %zu B] %zu/%zu\033[K", row.bytes, doneRows_, totalRows_);
  std::fflush(out_);
  showing_ = true;
}

void Progress::finish() {
  if (out_ == nullptr || !showing_) return;
  std::fputs("\r\033[K", out_);
  std::fflush(out_);
  showing_ = false;
}

}  // namespace braid::perf
