// The golden-file format shared by the pass and planner goldens (README.md): cases of
//   # case: NAME
//   # FIELD: VALUE          (any number: pass, settings, covers...)
//   <input>
//   # expect:
//   <expected output>
#pragma once

#include <dirent.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace mono::golden {

struct Case {
  std::string file, name;
  std::map<std::string, std::string> fields;  // "# FIELD: VALUE" lines, the value trimmed
  std::string input, expect;
  std::string field(const std::string& key) const {
    auto it = fields.find(key);
    return it == fields.end() ? "" : it->second;
  }
};

// The *.test files of `dir`, sorted.
inline std::vector<std::string> case_files(const std::string& dir) {
  std::vector<std::string> files;
  DIR* d = opendir(dir.c_str());
  while (dirent* e = d ? readdir(d) : nullptr) {
    const std::string n = e->d_name;
    if (n.size() > 5 && n.substr(n.size() - 5) == ".test") files.push_back(n);
  }
  if (d) closedir(d);
  std::sort(files.begin(), files.end());
  return files;
}

// Every case of every *.test file of `dir`, in file order.
inline std::vector<Case> load_cases(const std::string& dir) {
  std::vector<Case> cases;
  for (const std::string& f : case_files(dir)) {
    std::ifstream in(dir + "/" + f);
    std::string line;
    Case* c = nullptr;
    bool in_expect = false;
    while (std::getline(in, line)) {
      const size_t colon = line.find(':');
      if (line.rfind("# case: ", 0) == 0) {
        cases.push_back({f, line.substr(8), {}, "", ""});
        c = &cases.back();
        in_expect = false;
      } else if (c && line == "# expect:") {
        in_expect = true;
      } else if (c && !in_expect && line.rfind("# ", 0) == 0 && colon != std::string::npos) {
        const size_t v = line.find_first_not_of(' ', colon + 1);
        c->fields[line.substr(2, colon - 2)] = v == std::string::npos ? "" : line.substr(v);
      } else if (c) {
        (in_expect ? c->expect : c->input) += line + "\n";
      }
    }
  }
  return cases;
}

}  // namespace mono::golden
