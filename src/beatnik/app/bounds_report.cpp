#include "beatnik/app/bounds_report.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>

#include "beatnik/app/message_sets.hpp"
#include "beatnik/base/error.hpp"

namespace beatnik::app {
namespace {

using nlohmann::json;

bool read_json(const std::string& path, json& out, std::string& why) {
  std::ifstream in(path);
  if (!in) {
    why = fmt::format("--bounds {}: cannot be read", path);
    return false;
  }
  try {
    out = json::parse(in);
  } catch (const json::exception& e) {
    why = fmt::format("--bounds {}: not JSON ({})", path, e.what());
    return false;
  }
  if (!out.is_object() || out.value("schema", "") != "beatnik-bounds" || !out.contains("patterns") ||
      !out["patterns"].is_object()) {
    why = fmt::format("--bounds {}: not a bounds file of beatnik-commbench (schema beatnik-bounds)", path);
    return false;
  }
  return true;
}

// The timer regions that time a pattern's exchanges (seconds per step, slowest rank of each):
// halo: every "halo.NAME" region (pack, post, wait and unpack of one exchange); fft: the
// reshapes; ring: the ring pass's exposed and hidden transfer time. Negative: no region.
double pattern_seconds(const json& regions, const std::string& pattern) {
  double s = 0;
  bool any = false;
  auto take = [&](const std::string& n) {
    if (!regions.contains(n)) return;
    s += regions[n]["max"].get<double>();
    any = true;
  };
  if (pattern == "halo") {
    for (auto& [n, r] : regions.items())
      if (n.rfind("halo.", 0) == 0 && n.find('.', 5) == std::string::npos) take(n);
  } else if (pattern == "fft") {
    take("fft.reshape");
  } else if (pattern == "ring") {
    take("br.exact.ring");
    take("br.exact.ring.hidden");
  }
  return any ? s : -1.0;
}

}  // namespace

std::string bounds_file_problem(const std::string& path) {
  json j;
  std::string why;
  return read_json(path, j, why) ? std::string() : why;
}

void add_bounds(json& doc, const RunConfig& c, int ranks, const std::string& file) {
  json bounds;
  std::string why;
  doc["bounds"] = {{"file", file}};
  if (!read_json(file, bounds, why)) {  // it read well before the run
    doc["bounds"]["problem"] = why;
    return;
  }
  if (bounds.contains("setup") && bounds["setup"].value("validate", false))
    doc["bounds"]["note"] = "measured with -c: the fills and checks between exchanges slow the bounds down";
  const MessageSets sets = plan_message_sets(c, ranks);
  for (auto& [p, entry] : doc["communication"].items()) {
    long bytes = 0;
    for (auto& [k, v] : entry["bytes_per_step_total"].items()) bytes += static_cast<long>(v.get<double>());
    const double secs = pattern_seconds(doc["timers"]["regions"], p);
    entry["achieved_gb_per_s"] = secs > 0 ? json(bytes / secs / 1e9) : json(nullptr);
    entry["achievable_gb_per_s"] = nullptr;
    entry["percent_of_achievable"] = nullptr;
    const auto mine = sets.patterns.find(p);
    const json& theirs = bounds["patterns"].contains(p) ? bounds["patterns"][p] : json();
    if (mine == sets.patterns.end()) entry["bounds_status"] = "message set not planned";
    else if (theirs.is_null() || !theirs.contains("fingerprint")) entry["bounds_status"] = "no bound for this pattern in the file";
    else if (theirs["fingerprint"] != mine->second.fingerprint()) entry["bounds_status"] = "bounds do not match this run";
    else if (secs <= 0) entry["bounds_status"] = "no timer region for this pattern";
    else {
      const double bound = theirs["gb_per_s"].get<double>();
      entry["achievable_gb_per_s"] = bound;
      entry["percent_of_achievable"] = bound > 0 ? 100.0 * (bytes / secs / 1e9) / bound : 0.0;
      entry["bounds_status"] = "matched";
    }
  }
}

std::string bounds_header(const json& doc) {
  return doc.contains("bounds") ? fmt::format(" {:>10} {:>9}", "GB/s", "% achv") : std::string();
}

std::string bounds_columns(const json& e) {
  if (!e.contains("bounds_status")) return {};
  const std::string gbs =
      e["achieved_gb_per_s"].is_null() ? std::string("-") : fmt::format("{:.4f}", e["achieved_gb_per_s"].get<double>());
  if (e["percent_of_achievable"].is_null())
    return fmt::format(" {:>10}   {}", gbs, e["bounds_status"].get<std::string>());
  return fmt::format(" {:>10} {:>8.1f}%", gbs, e["percent_of_achievable"].get<double>());
}

std::function<double(const std::string&)> test_slowdown_from_environment() {
  const char* v = std::getenv("BEATNIK_TEST_SLOW_PATTERN");
  if (!v || !*v) return nullptr;
  const std::string s(v);
  const auto colon = s.find(':');
  const std::string pattern = s.substr(0, colon);
  double us = -1;
  if (colon != std::string::npos) {
    char* end = nullptr;
    us = std::strtod(s.c_str() + colon + 1, &end);
    if (end == s.c_str() + colon + 1 || *end != '\0') us = -1;
  }
  if ((pattern != "halo" && pattern != "fft" && pattern != "ring") || !(us >= 0 && us <= 1e7))
    throw InputError(fmt::format("BEATNIK_TEST_SLOW_PATTERN={}: expected PATTERN:MICROSECONDS with PATTERN halo, fft "
                                 "or ring and 0 <= MICROSECONDS <= 1e7",
                                 s));
  const double seconds = us * 1e-6;
  return [pattern, seconds](const std::string& region) {
    const bool hit = pattern == "halo"   ? region.rfind("halo.", 0) == 0 && region.size() > 5 &&
                                             region.compare(region.size() - 5, 5, ".post") == 0
                     : pattern == "fft"  ? region == "fft.reshape"
                                         : region == "br.exact.ring";
    return hit ? seconds : 0.0;
  };
}

}  // namespace beatnik::app
