#pragma once
// What the strategy registries of every communication pattern (comm/halo, comm/ring,
// comm/migrate) share: the "a, b or c" list for messages and the --help block, from any list of
// entries with a `name` and a `description`.
#include <cstdio>
#include <string>
#include <vector>

namespace beatnik::comm {

template <class Entry>
std::string registry_names(const std::vector<Entry>& all) {
  std::string s;
  for (std::size_t k = 0; k < all.size(); ++k) {
    if (k > 0) s += (k + 1 == all.size()) ? " or " : ", ";
    s += all[k].name;
  }
  return s;
}

// One line per strategy: its name padded to `width`, then its description.
template <class Entry>
std::string registry_help(const std::vector<Entry>& all, int width) {
  std::string s;
  for (const Entry& e : all) {
    char name[64];
    std::snprintf(name, sizeof(name), "  %-*s ", width, e.name);
    s += name;
    s += e.description;
    s += '\n';
  }
  return s;
}

}  // namespace beatnik::comm
