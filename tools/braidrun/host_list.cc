#include "braidrun/host_list.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

namespace braid::run {
namespace {

// Names go unquoted into a launcher's command line (and ssh's remote shell), so
// only characters that no shell treats specially are accepted.
bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ||
         c == '@';
}

bool parseCount(const std::string& text, int maxRanks, int* count) {
  if (text.empty() || text.size() > 7) return false;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  *count = std::stoi(text);
  return *count >= 1 && *count <= maxRanks;
}

// One host entry: `where` says where it came from in errors.
bool addHost(const std::string& name, const std::string& countText, int maxRanks,
             const std::string& where, std::vector<HostSlots>* hosts, std::string* error) {
  if (name.empty()) {
    *error = where + ": a host name is missing";
    return false;
  }
  if (!std::all_of(name.begin(), name.end(), isNameChar)) {
    *error = where + ": host name '" + name +
             "' may hold only letters, digits and the characters . - _ @";
    return false;
  }
  int count = 1;
  if (!countText.empty() && !parseCount(countText, maxRanks, &count)) {
    *error = where + ": host '" + name + "' needs a whole number of ranks from 1 to " +
             std::to_string(maxRanks) + ", got '" + countText + "'";
    return false;
  }
  for (const HostSlots& host : *hosts) {
    if (host.name == name) {
      *error = where + ": host '" + name + "' is listed twice; give it one count";
      return false;
    }
  }
  hosts->push_back(HostSlots{name, count});
  return true;
}

// "name" or "name:count"; an empty count after ':' is an error, not one rank.
bool addColonEntry(const std::string& entry, int maxRanks, const std::string& where,
                   std::vector<HostSlots>* hosts, std::string* error) {
  const size_t colon = entry.find(':');
  if (colon == std::string::npos) return addHost(entry, "", maxRanks, where, hosts, error);
  const std::string count = entry.substr(colon + 1);
  if (count.empty()) {
    *error = where + ": '" + entry + "' has no rank count after ':'";
    return false;
  }
  return addHost(entry.substr(0, colon), count, maxRanks, where, hosts, error);
}

}  // namespace

bool parseHostList(const std::string& text, int maxRanks, std::vector<HostSlots>* hosts,
                   std::string* error) {
  hosts->clear();
  size_t start = 0;
  for (int index = 1;; ++index) {
    const size_t comma = text.find(',', start);
    const std::string entry = text.substr(start, comma - start);
    const std::string where = "--hosts '" + text + "', entry " + std::to_string(index);
    if (entry.empty()) {
      *error = where + " is empty (expected name or name:count)";
      return false;
    }
    if (!addColonEntry(entry, maxRanks, where, hosts, error)) return false;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return true;
}

bool parseHostFile(const std::string& text, const std::string& path, int maxRanks,
                   std::vector<HostSlots>* hosts, std::string* error) {
  hosts->clear();
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::vector<std::string> fields;
    for (std::string word; words >> word;) fields.push_back(word);
    if (fields.empty()) continue;
    const std::string where = "hostfile " + path + ", line " + std::to_string(number);
    if (fields.size() == 1) {
      if (!addColonEntry(fields[0], maxRanks, where, hosts, error)) return false;
    } else if (fields.size() == 2 && fields[1].rfind("slots=", 0) == 0) {
      if (fields[1].size() == 6) {
        *error = where + ": 'slots=' needs a number";
        return false;
      }
      if (!addHost(fields[0], fields[1].substr(6), maxRanks, where, hosts, error)) return false;
    } else {
      *error = where + ": expected 'name', 'name:count' or 'name slots=count', got '" + line + "'";
      return false;
    }
  }
  if (hosts->empty()) {
    *error = "hostfile " + path + " names no host";
    return false;
  }
  return true;
}

bool readHostFile(const std::string& path, int maxRanks, std::vector<HostSlots>* hosts,
                  std::string* error) {
  std::ifstream file(path);
  if (!file) {
    *error = "cannot read hostfile '" + path + "'";
    return false;
  }
  std::stringstream text;
  text << file.rdbuf();
  return parseHostFile(text.str(), path, maxRanks, hosts, error);
}

int totalRanks(const std::vector<HostSlots>& hosts) {
  int total = 0;
  for (const HostSlots& host : hosts) total += host.ranks;
  return total;
}

std::vector<RankPlace> placeRanks(const std::vector<HostSlots>& hosts, MapBy mapBy) {
  std::vector<RankPlace> places;
  std::vector<int> used(hosts.size(), 0);
  const int total = totalRanks(hosts);
  size_t host = 0;
  while (static_cast<int>(places.size()) < total) {
    // Slot order stays on a host until it is full; node order moves on after each rank.
    while (used[host] == hosts[host].ranks) host = (host + 1) % hosts.size();
    places.push_back(RankPlace{static_cast<int>(host), used[host]++, hosts[host].ranks});
    if (mapBy == MapBy::kNode) host = (host + 1) % hosts.size();
  }
  return places;
}

std::string describeHosts(const std::vector<HostSlots>& hosts) {
  std::string text;
  for (const HostSlots& host : hosts) {
    text += (text.empty() ? "" : ", ") + host.name + ":" + std::to_string(host.ranks);
  }
  return text;
}

}  // namespace braid::run
