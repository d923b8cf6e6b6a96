#include "comm/argument_check.h"

#include <cstdio>
#include <cstring>

#include "core/types.h"

namespace braid {
namespace {

using coll::CollKind;

bool hasOp(CollKind k) {
  return k == CollKind::kAllReduce || k == CollKind::kReduce || k == CollKind::kReduceScatter;
}
bool hasRoot(CollKind k) {
  return k == CollKind::kBroadcast || k == CollKind::kReduce || k == CollKind::kGather ||
         k == CollKind::kScatter;
}

std::string describe(const CallSignature& s) {
  char text[160];
  auto kind = static_cast<CollKind>(s.kind);
  int n = std::snprintf(text, sizeof(text), "%.*s(count %llu, %s", int(sizeof(s.api)), s.api,
                        static_cast<unsigned long long>(s.count),
                        typeName(static_cast<braidDataType_t>(s.type)));
  if (hasOp(kind))
    n += std::snprintf(text + n, sizeof(text) - n, ", %s", opName(static_cast<braidRedOp_t>(s.op)));
  if (hasRoot(kind)) n += std::snprintf(text + n, sizeof(text) - n, ", root %d", s.root);
  std::snprintf(text + n, sizeof(text) - n, ")");
  return text;
}

}  // namespace

CallSignature signatureOf(const Op& op) {
  CallSignature s;
  s.kind = static_cast<int32_t>(op.coll);
  s.type = op.coll == CollKind::kBarrier ? 0 : op.type;
  s.op = hasOp(op.coll) ? op.op : 0;
  s.root = hasRoot(op.coll) ? op.root : 0;
  // AllToAllv counts legitimately differ per rank; the size check of each message covers them.
  s.count = op.coll == CollKind::kAllToAllv ? 0 : op.count;
  std::snprintf(s.api, sizeof(s.api), "%s", op.apiName);
  return s;
}

Status compareSignatures(const std::vector<CallSignature>& all) {
  const CallSignature& first = all[0];
  auto differs = [&first](const CallSignature& s) {
    return s.kind != first.kind || s.type != first.type || s.op != first.op ||
           s.root != first.root || s.count != first.count;
  };
  int culprit = -1;
  std::string others;  // every further rank that disagrees with rank 0, so none hides
  for (size_t r = 1; r < all.size(); ++r) {
    if (!differs(all[r])) continue;
    if (culprit < 0) {
      culprit = static_cast<int>(r);
    } else {
      others += (others.empty() ? "" : ", ") + std::to_string(r);
    }
  }
  if (culprit < 0) return Status::ok();
  std::string message = "BRAID_CHECK: rank " + std::to_string(culprit) + " called " +
                        describe(all[culprit]) + " but rank 0 called " + describe(first);
  if (others.find(',') != std::string::npos) {
    message += "; ranks " + others + " disagree with rank 0 too";
  } else if (!others.empty()) {
    message += "; rank " + others + " disagrees with rank 0 too";
  }
  return Status(braidInvalidUsage, message, culprit);
}

}  // namespace braid
