#include "beatnik/io/trace_files.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "beatnik/io/checked_file.hpp"

namespace beatnik::io {
namespace {

using Event = TraceRecorder::Event;

std::string escaped(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", int(c));
      continue;
    }
    out += c;
  }
  return out;
}

double micros(double seconds) { return seconds * 1e6; }

// Message tracks of a rank: sends to peer p on thread 1 + 3p, receives from p on 2 + 3p, gets
// from p on 3 + 3p.
int track(const Event& e) { return e.kind + 3 * e.peer; }

const char* track_name(const Event& e) {
  return e.kind == TraceRecorder::Send ? "send to" : e.kind == TraceRecorder::Recv ? "recv from" : "get from";
}

// A get in the GOAL file (which has only sends and receives): the reader sends a request of 0
// bytes to the owner, the owner answers with the data; tags after the matched pairs' ones.
struct GoalGet {
  int reader = 0, owner = 0;
  long bytes = 0, request_tag = 0, reply_tag = 0;
};

}  // namespace

std::vector<MatchedMessage> match_messages(const GatheredTrace& t, long* unmatched) {
  // (pattern, call, src, dst) -> the sends and the receives of that call between the two ranks
  using Key = std::tuple<int, int, int, int>;
  std::map<Key, std::pair<std::vector<std::size_t>, std::vector<std::size_t>>> calls;
  for (int r = 0; r < static_cast<int>(t.ranks.size()); ++r) {
    const auto& ev = t.ranks[r].events;
    for (std::size_t i = 0; i < ev.size(); ++i) {
      const Event& e = ev[i];
      if (e.kind == TraceRecorder::Send) calls[Key{e.name, e.seq, r, e.peer}].first.push_back(i);
      if (e.kind == TraceRecorder::Recv) calls[Key{e.name, e.seq, e.peer, r}].second.push_back(i);
    }
  }
  std::vector<MatchedMessage> out;
  long lost = 0, tag = 0;
  for (auto& [key, lists] : calls) {
    const int src = std::get<2>(key), dst = std::get<3>(key);
    auto& [sends, recvs] = lists;
    if (src < 0 || dst < 0 || src >= int(t.ranks.size()) || dst >= int(t.ranks.size())) {
      lost += long(sends.size() + recvs.size());
      continue;
    }
    const auto& se = t.ranks[src].events;
    const auto& re = t.ranks[dst].events;
    // Within one call the pairs are told apart by size (several messages of one call between
    // the same two ranks, e.g. a halo's faces on a periodic 2-rank grid, go in either order).
    std::stable_sort(sends.begin(), sends.end(), [&](std::size_t a, std::size_t b) { return se[a].bytes < se[b].bytes; });
    std::stable_sort(recvs.begin(), recvs.end(), [&](std::size_t a, std::size_t b) { return re[a].bytes < re[b].bytes; });
    std::size_t i = 0, j = 0;
    while (i < sends.size() && j < recvs.size()) {
      const long sb = se[sends[i]].bytes, rb = re[recvs[j]].bytes;
      if (sb == rb) {
        out.push_back(MatchedMessage{src, dst, sends[i], recvs[j], tag++});
        ++i;
        ++j;
      } else if (sb < rb) {
        ++lost;
        ++i;
      } else {
        ++lost;
        ++j;
      }
    }
    lost += long(sends.size() - i + recvs.size() - j);
  }
  if (unmatched) *unmatched = lost;
  return out;
}

void write_chrome_trace(const std::string& path, const GatheredTrace& t, const std::vector<MatchedMessage>& m) {
  std::string s;
  s.reserve(1 << 20);
  s += "{\"displayTimeUnit\":\"ns\",\"otherData\":{";
  s += fmt::format("\"producer\":\"beatnik --trace\",\"ranks\":{},\"first_measured_step\":{},"
                   "\"dropped_events\":{},\"max_events_per_rank\":{},\"time_unit\":\"microseconds from the run's "
                   "trace origin\"}},\n\"traceEvents\":[\n",
                   t.ranks.size(), t.first_measured_step, t.dropped, t.max_events_per_rank);
  bool first = true;
  auto put = [&](const std::string& e) {
    if (!first) s += ",\n";
    first = false;
    s += e;
  };
  std::vector<std::vector<long>> send_tag(t.ranks.size()), recv_tag(t.ranks.size());
  for (std::size_t r = 0; r < t.ranks.size(); ++r) {
    send_tag[r].assign(t.ranks[r].events.size(), -1);
    recv_tag[r].assign(t.ranks[r].events.size(), -1);
  }
  for (const MatchedMessage& x : m) {
    send_tag[x.src][x.send] = x.tag;
    recv_tag[x.dst][x.recv] = x.tag;
  }
  for (std::size_t r = 0; r < t.ranks.size(); ++r) {
    const auto& rk = t.ranks[r];
    put(fmt::format("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{},\"args\":{{\"name\":\"rank {} (node {})\"}}}}", r,
                    r, rk.node));
    put(fmt::format("{{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":{},\"args\":{{\"sort_index\":{}}}}}", r, r));
    put(fmt::format("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":\"phases\"}}}}", r));
    std::map<int, std::string> tracks;
    for (const Event& e : rk.events)
      if (e.kind != TraceRecorder::Phase)
        tracks.emplace(track(e), fmt::format("{} rank {}", track_name(e), e.peer));
    for (const auto& [tid, name] : tracks)
      put(fmt::format("{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":\"{}\"}}}}", r,
                      tid, name));
    for (std::size_t i = 0; i < rk.events.size(); ++i) {
      const Event& e = rk.events[i];
      const std::string name = escaped(t.names.at(e.name));
      const double ts = micros(e.t0), dur = std::max(0.0, micros(e.t1 - e.t0));
      if (e.kind == TraceRecorder::Phase) {
        put(fmt::format("{{\"ph\":\"X\",\"cat\":\"phase\",\"name\":\"{}\",\"pid\":{},\"tid\":0,\"ts\":{:.3f},\"dur\":{:.3f},"
                        "\"args\":{{\"step\":{}}}}}",
                        name, r, ts, dur, e.step));
        continue;
      }
      const bool send = e.kind == TraceRecorder::Send;
      const char* cat = send ? "send" : e.kind == TraceRecorder::Recv ? "recv" : "get";
      const long tag = send ? send_tag[r][i] : e.kind == TraceRecorder::Recv ? recv_tag[r][i] : -1;
      put(fmt::format("{{\"ph\":\"X\",\"cat\":\"{}\",\"name\":\"{} {}\",\"pid\":{},\"tid\":{},\"ts\":{:.3f},\"dur\":{:.3f},"
                      "\"args\":{{\"pattern\":\"{}\",\"peer\":{},\"bytes\":{},\"step\":{},\"seq\":{},\"tag\":{}}}}}",
                      cat, name, cat, r, track(e), ts, dur, name, e.peer, e.bytes, e.step, e.seq, tag));
    }
  }
  // Flow arrows: from the start of each send to the end of its receive.
  for (const MatchedMessage& x : m) {
    const Event& se = t.ranks[x.src].events[x.send];
    const Event& re = t.ranks[x.dst].events[x.recv];
    put(fmt::format("{{\"ph\":\"s\",\"cat\":\"message\",\"name\":\"message\",\"id\":{},\"pid\":{},\"tid\":{},\"ts\":{:.3f}}}",
                    x.tag, x.src, track(se), micros(se.t0)));
    put(fmt::format("{{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"message\",\"name\":\"message\",\"id\":{},\"pid\":{},\"tid\":{},"
                    "\"ts\":{:.3f}}}",
                    x.tag, x.dst, track(re), micros(re.t1)));
  }
  s += "\n]}\n";
  write_file_checked(path, s);
}

void write_goal(const std::string& path, const GatheredTrace& t, const std::vector<MatchedMessage>& m) {
  const int n = static_cast<int>(t.ranks.size());
  std::vector<std::vector<long>> send_tag(n), recv_tag(n);
  for (int r = 0; r < n; ++r) {
    send_tag[r].assign(t.ranks[r].events.size(), -1);
    recv_tag[r].assign(t.ranks[r].events.size(), -1);
  }
  for (const MatchedMessage& x : m) {
    if (x.src == x.dst) continue;  // a rank's copy to itself is computation here
    send_tag[x.src][x.send] = x.tag;
    recv_tag[x.dst][x.recv] = x.tag;
  }
  // The measured steps' gets (their index in send_tag's place), and per owner the ones it serves.
  long next_tag = 0;
  for (const MatchedMessage& x : m) next_tag = std::max(next_tag, x.tag + 1);
  std::vector<GoalGet> gets;
  std::vector<std::vector<std::size_t>> served(n);
  for (int r = 0; r < n; ++r)
    for (std::size_t i = 0; i < t.ranks[r].events.size(); ++i) {
      const Event& e = t.ranks[r].events[i];
      const bool other = e.peer != r && e.peer >= 0 && e.peer < n;
      if (e.kind != TraceRecorder::Get || e.step < t.first_measured_step || !other) continue;
      send_tag[r][i] = static_cast<long>(gets.size());
      served[e.peer].push_back(gets.size());
      gets.push_back(GoalGet{r, e.peer, e.bytes, next_tag, next_tag + 1});
      next_tag += 2;
    }
  std::string s = fmt::format("# beatnik --trace-goal: steps {} and later, {} ranks; calc in nanoseconds\nnum_ranks {}\n",
                              t.first_measured_step, n, n);
  for (int r = 0; r < n; ++r) {
    const auto& ev = t.ranks[r].events;
    double begin = INFINITY, end = -INFINITY;
    std::vector<std::size_t> msgs;
    for (std::size_t i = 0; i < ev.size(); ++i) {
      if (ev[i].step < t.first_measured_step) continue;
      begin = std::min(begin, ev[i].t0);
      end = std::max(end, ev[i].t1);
      const long tag = ev[i].kind == TraceRecorder::Recv ? recv_tag[r][i] : send_tag[r][i];
      if (ev[i].kind != TraceRecorder::Phase && tag >= 0) msgs.push_back(i);
    }
    std::stable_sort(msgs.begin(), msgs.end(), [&](std::size_t a, std::size_t b) { return ev[a].t0 < ev[b].t0; });
    s += fmt::format("\nrank {} {{\n", r);
    long label = 0;
    std::vector<long> previous;  // the last batch's operations
    double cursor = begin;
    auto calc = [&](double seconds) {
      const long id = ++label;
      s += fmt::format("l{}: calc {}\n", id, std::llround(std::max(0.0, seconds) * 1e9));
      for (long p : previous) s += fmt::format("l{} requires l{}\n", id, p);
      previous.clear();
      return id;
    };
    for (std::size_t k = 0; k < msgs.size();) {
      // A batch: the messages one call of a pattern posted together.
      std::size_t e = k;
      const Event& head = ev[msgs[k]];
      while (e < msgs.size() && ev[msgs[e]].t0 == head.t0 && ev[msgs[e]].name == head.name &&
             ev[msgs[e]].seq == head.seq)
        ++e;
      const long c = calc(head.t0 - cursor);
      double done = head.t0;
      for (std::size_t q = k; q < e; ++q) {
        const Event& x = ev[msgs[q]];
        if (x.kind == TraceRecorder::Get) {  // the request, and the data answering it
          const GoalGet& g = gets[size_t(send_tag[r][msgs[q]])];
          s += fmt::format("l{}: send 0b to {} tag {}\nl{} requires l{}\n", label + 1, g.owner, g.request_tag,
                           label + 1, c);
          s += fmt::format("l{}: recv {}b from {} tag {}\nl{} requires l{}\n", label + 2, g.bytes, g.owner, g.reply_tag,
                           label + 2, c);
          previous.push_back(label + 1);
          previous.push_back(label + 2);
          label += 2;
          done = std::max(done, x.t1);
          continue;
        }
        const long id = ++label;
        if (x.kind == TraceRecorder::Send)
          s += fmt::format("l{}: send {}b to {} tag {}\n", id, x.bytes, x.peer, send_tag[r][msgs[q]]);
        else
          s += fmt::format("l{}: recv {}b from {} tag {}\n", id, x.bytes, x.peer, recv_tag[r][msgs[q]]);
        s += fmt::format("l{} requires l{}\n", id, c);
        previous.push_back(id);
        done = std::max(done, x.t1);
      }
      cursor = done;
      k = e;
    }
    if (std::isfinite(end) && end > cursor) calc(end - cursor);
    // The gets other ranks made of this one: passive, so outside its chain (no calc precedes
    // them); each answer leaves when its request has arrived.
    for (std::size_t k : served[r]) {
      const GoalGet& g = gets[k];
      s += fmt::format("l{}: recv 0b from {} tag {}\n", label + 1, g.reader, g.request_tag);
      s += fmt::format("l{}: send {}b to {} tag {}\nl{} requires l{}\n", label + 2, g.bytes, g.reader, g.reply_tag,
                       label + 2, label + 1);
      label += 2;
    }
    s += "}\n";
  }
  write_file_checked(path, s);
}

}  // namespace beatnik::io
