// The hosts of a multi-host job and the place of every rank on them.
//
// Hosts come from --hosts ("a:4,b:4", a bare "a" meaning one rank) or from a
// hostfile (one host per line: "a", "a:4" or "a slots=4", '#' comments), as
// mpirun's -H and --hostfile take them. Ranks fill the hosts in order
// (--map-by slot: ranks 0-3 on a, 4-7 on b) or round robin (--map-by node:
// ranks 0, 2, 4, 6 on a), a host taking no more ranks than its count. Every
// function here is pure (the hostfile reader aside) and reports bad input as a
// sentence naming the entry or line at fault.
#pragma once

#include <string>
#include <vector>

namespace braid::run {

struct HostSlots {
  std::string name;  // as the launcher template receives it ({host})
  int ranks = 1;
};

enum class MapBy { kSlot, kNode };

/// Where one rank runs and its numbering on that host.
struct RankPlace {
  int host = 0;  // index into the host list
  int localRank = 0;
  int localSize = 1;
};

/// Parses a --hosts value. False with *error set on an empty or duplicated entry, a
/// malformed name or a count that is not a whole number from 1 to `maxRanks`.
bool parseHostList(const std::string& text, int maxRanks, std::vector<HostSlots>* hosts,
                   std::string* error);

/// Parses a hostfile's text; errors name `path` and the line.
bool parseHostFile(const std::string& text, const std::string& path, int maxRanks,
                   std::vector<HostSlots>* hosts, std::string* error);

/// Reads and parses the hostfile at `path`.
bool readHostFile(const std::string& path, int maxRanks, std::vector<HostSlots>* hosts,
                  std::string* error);

/// The sum of the hosts' rank counts.
int totalRanks(const std::vector<HostSlots>& hosts);

/// The place of each of the totalRanks(hosts) ranks.
std::vector<RankPlace> placeRanks(const std::vector<HostSlots>& hosts, MapBy mapBy);

/// "a:4, b:2" for messages.
std::string describeHosts(const std::vector<HostSlots>& hosts);

}  // namespace braid::run
