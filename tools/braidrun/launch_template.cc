#include "braidrun/launch_template.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace braid::run {
namespace {

constexpr const char* kHostPlaceholder = "{host}";

std::string replaceAll(std::string text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

std::string baseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// Shell-like word splitting without expansion. False on an unterminated quote.
bool splitWords(const std::string& text, std::vector<std::string>* words) {
  std::string word;
  bool inWord = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (inWord) words->push_back(word);
      word.clear();
      inWord = false;
      continue;
    }
    inWord = true;
    if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
    } else if (c == '\'') {
      const size_t end = text.find('\'', i + 1);
      if (end == std::string::npos) return false;
      word += text.substr(i + 1, end - i - 1);
      i = end;
    } else if (c == '"') {
      size_t j = i + 1;
      for (; j < text.size() && text[j] != '"'; ++j) {
        if (text[j] == '\\' && j + 1 < text.size()) ++j;
        word += text[j];
      }
      if (j >= text.size()) return false;
      i = j;
    } else {
      word += c;
    }
  }
  if (inWord) words->push_back(word);
  return true;
}

}  // namespace

bool parseLaunchTemplate(const std::string& text, bool forceQuote, LaunchTemplate* launch,
                         std::string* error) {
  launch->words.clear();
  if (!splitWords(text, &launch->words)) {
    *error = "--launcher '" + text + "' has an unterminated quote";
    return false;
  }
  if (launch->words.empty()) {
    *error = "--launcher is empty; give a command such as 'ssh {host}'";
    return false;
  }
  const bool hasHost = std::any_of(launch->words.begin(), launch->words.end(), [](auto& w) {
    return w.find(kHostPlaceholder) != std::string::npos;
  });
  if (!hasHost) {
    *error = "--launcher '" + text + "' does not contain {host}, where each host's name goes";
    return false;
  }
  const std::string program = baseName(launch->words[0]);
  launch->remoteShell = forceQuote || program == "ssh" || program == "rsh";
  return true;
}

std::vector<std::string> launchArgv(const LaunchTemplate& launch, const std::string& host,
                                    const std::vector<std::string>& env,
                                    const std::vector<std::string>& command) {
  std::vector<std::string> argv;
  for (const std::string& word : launch.words) {
    argv.push_back(replaceAll(word, kHostPlaceholder, host));
  }
  auto add = [&](const std::string& word) {
    argv.push_back(launch.remoteShell ? shellQuote(word) : word);
  };
  add("env");
  for (const std::string& entry : env) add(entry);
  for (const std::string& word : command) add(word);
  return argv;
}

std::string shellQuote(const std::string& word) {
  const bool safe = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("@%+=:,./_-").find(c) != std::string_view::npos;
  });
  if (safe) return word;
  return "'" + replaceAll(word, "'", "'\\''") + "'";
}

}  // namespace braid::run
