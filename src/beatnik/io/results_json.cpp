#include "beatnik/io/results_json.hpp"

#include <cstdio>
#include <fstream>

#include "beatnik/base/error.hpp"

namespace beatnik::io {

void write_json_file(const std::string& path, const nlohmann::json& doc) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    if (!f) throw Error("cannot open " + tmp + " for writing");
    f << doc.dump(2) << "\n";
    if (!f) throw Error("failed writing " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error("cannot rename " + tmp + " to " + path);
  }
}

}  // namespace beatnik::io
