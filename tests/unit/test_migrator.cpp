// The migration pattern (comm/migrate) for every registered strategy: every received double and
// count checked exactly against the sender's formula, round trips that restore the send buffer
// bit for bit, byte accounting against the count matrix, identical results across strategies,
// the neighbour graph cache, and errors for bad input. Host memory only (GPU runs elsewhere).
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <random>

#include "beatnik/comm/context.hpp"
#include "beatnik/comm/migrate/migrator.hpp"
#include "beatnik/comm/migrate/registry.hpp"
#include "support/test_support.hpp"

using namespace beatnik;

namespace {

using Matrix = std::vector<std::vector<long>>;  // records sent, [source][destination]

const exec::Space kHost = exec::Space::Host;

// Component c of record k that rank s sends to rank d: distinct for every (s, d, k, c) and exact.
double value(int s, int d, long k, int c) { return double(((long(s) * 64 + d) * 100000 + k) * 8 + c) + 0.25; }

struct Case {
  std::string name;
  Matrix counts;
  int width;
};

Matrix zeros(int p) { return Matrix(p, std::vector<long>(p, 0)); }

// The same on every rank: one seeded generator, drawn in the same order everywhere.
std::vector<Case> cases(int p) {
  std::mt19937_64 gen(20240611);
  std::vector<Case> out;
  Matrix m = zeros(p);
  for (auto& row : m)
    for (long& c : row) c = (gen() % 3 == 0) ? 0 : 1 + long(gen() % 8);
  out.push_back({"random", m, 6});

  m = zeros(p);
  for (auto& row : m)
    for (long& c : row) c = long(gen() % 21);
  const int empty = p / 2;  // neither sends nor receives
  for (int r = 0; r < p; ++r) m[empty][r] = m[r][empty] = 0;
  out.push_back({"random-with-empty-rank", m, 3});

  m = zeros(p);
  for (int s = 0; s < p; ++s) m[s][p - 1] = 1 + long(gen() % 5);
  out.push_back({"all-to-last-rank", m, 6});

  out.push_back({"nothing-anywhere", zeros(p), 3});

  m = zeros(p);
  for (int s = 0; s < p; ++s) m[s][s] = 4;
  out.push_back({"self-only", m, 6});

  m = zeros(p);
  for (auto& row : m)
    for (long& c : row) c = (gen() % 4 == 0) ? 100 + long(gen() % 300) : 0;
  out.push_back({"sparse-large", m, 3});
  return out;
}

Matrix transpose(const Matrix& m) {
  Matrix t = zeros(static_cast<int>(m.size()));
  for (std::size_t s = 0; s < m.size(); ++s)
    for (std::size_t d = 0; d < m.size(); ++d) t[d][s] = m[s][d];
  return t;
}

// Ring: every rank sends `n` records to rank + step.
Matrix ring(int p, int step, long n) {
  Matrix m = zeros(p);
  for (int s = 0; s < p; ++s) m[s][((s + step) % p + p) % p] += n;
  return m;
}

std::vector<double> send_records(const Matrix& m, int me, int width) {
  std::vector<double> v;
  for (std::size_t d = 0; d < m.size(); ++d)
    for (long k = 0; k < m[me][d]; ++k)
      for (int c = 0; c < width; ++c) v.push_back(value(me, static_cast<int>(d), k, c));
  return v;
}

std::vector<int> world_locality() {
  comm::Context ctx(MPI_COMM_WORLD);
  return ctx.locality(MPI_COMM_WORLD);
}

// Strategies this build and MPI library can run (all of them, normally).
std::vector<std::string> strategies() {
  std::vector<std::string> names;
  for (const auto& e : comm::migrate::registry()) {
    const std::string why = e.unavailable();
    if (why.empty()) names.push_back(e.name);
    else if (test::world_rank() == 0) std::printf("[ NOT RUN  ] migration strategy %s: %s\n", e.name, why.c_str());
  }
  return names;
}

// One exchange of `m` and its return trip, every double and count checked. Returns what this
// rank received (for comparing strategies); `ok` false on any mismatch.
std::vector<double> exchange_and_return(comm::Migrator& mig, const Matrix& m, int width, const std::string& pattern,
                                        bool& ok) {
  const int me = test::world_rank(), p = test::world_size();
  const std::vector<double> send = send_records(m, me, width);
  std::vector<long> recv_counts;
  exec::Buffer<double> recv;
  mig.exchange(m[me], send.data(), width, recv_counts, recv, pattern);

  const Matrix t = transpose(m);
  EXPECT_EQ(recv_counts, t[me]) << mig.strategy() << " " << pattern;
  ok = ok && recv_counts == t[me];
  long total = 0;
  for (long c : t[me]) total += c;
  EXPECT_GE(recv.size(), std::size_t(total * width));
  std::vector<double> got;
  if (recv_counts == t[me] && recv.size() >= std::size_t(total * width)) {
    got.assign(recv.data(), recv.data() + total * width);
    long bad = 0, at = 0;
    for (int s = 0; s < p; ++s)
      for (long k = 0; k < t[me][s]; ++k)
        for (int c = 0; c < width; ++c)
          if (got[at++] != value(s, me, k, c)) ++bad;
    EXPECT_EQ(bad, 0) << mig.strategy() << " " << pattern << ": wrong received doubles";
    ok = ok && bad == 0;
  }

  // The return trip: what arrived goes back to where it came from, counts swapped (only when
  // every rank got the right counts: wrong ones could leave a receive waiting forever).
  std::vector<double> back(send.size() + 1, -1.0);  // + 1: a sentinel past the end
  if (test::all_ranks(recv_counts == t[me])) mig.exchange_known(t[me], recv.data(), width, m[me], back.data(), pattern);
  const bool same = std::equal(send.begin(), send.end(), back.begin()) && back.back() == -1.0;  // send may be empty
  EXPECT_TRUE(same) << mig.strategy() << " " << pattern << ": the round trip changed the records";
  ok = ok && same;
  return got;
}

}  // namespace

TEST(Migrator, EveryStrategyDeliversEveryRecordAndReturnsItExactly) {
  const int me = test::world_rank(), p = test::world_size();
  const std::vector<int> loc = world_locality();
  const auto all = cases(p);
  std::vector<std::vector<double>> reference(all.size());  // the first strategy's receive buffers
  bool first = true;
  for (const std::string& name : strategies()) {
    comm::CommStats stats;
    comm::Migrator mig(MPI_COMM_WORLD, kHost, name, loc, &stats);
    EXPECT_EQ(mig.strategy(), name);
    for (std::size_t n = 0; n < all.size(); ++n) {
      const Case& c = all[n];
      stats.reset();
      bool ok = true;
      const std::vector<double> got = exchange_and_return(mig, c.counts, c.width, "migrate", ok);
      EXPECT_TRUE(test::all_ranks(ok)) << name << " " << c.name;

      // Accounting: the forward blocks this rank sent, then the return blocks, self included.
      comm::PatternStats want;
      want.calls = 2;
      for (int r = 0; r < p; ++r)
        for (long k : {c.counts[me][r], c.counts[r][me]})
          if (k > 0) {
            want.messages[loc[r]] += 1;
            want.bytes[loc[r]] += k * c.width * long(sizeof(double));
          }
      const comm::PatternStats& have = stats.stats().at("migrate");
      EXPECT_EQ(have.calls, want.calls) << name << " " << c.name;
      for (int l = 0; l < 3; ++l) {
        EXPECT_EQ(have.messages[l], want.messages[l]) << name << " " << c.name << " locality " << l;
        EXPECT_EQ(have.bytes[l], want.bytes[l]) << name << " " << c.name << " locality " << l;
      }

      if (first) reference[n] = got;
      else EXPECT_TRUE(got.size() == reference[n].size() &&
                       std::equal(got.begin(), got.end(), reference[n].begin()))
          << name << " " << c.name << ": differs from " << comm::migrate::registry()[0].name;
    }
    first = false;
  }
}

TEST(Migrator, ReceiveBufferGrowsAndNeverShrinks) {
  const int me = test::world_rank(), p = test::world_size();
  for (const std::string& name : strategies()) {
    comm::Migrator mig(MPI_COMM_WORLD, kHost, name, world_locality(), nullptr);
    exec::Buffer<double> recv;
    std::vector<long> counts;
    const Matrix big = ring(p, 1, 50), small = ring(p, 1, 2);
    std::vector<double> send = send_records(big, me, 3);
    mig.exchange(big[me], send.data(), 3, counts, recv, "migrate");
    const std::size_t grown = recv.size();
    const double* where = recv.data();
    EXPECT_GE(grown, std::size_t(150)) << name;
    send = send_records(small, me, 3);
    mig.exchange(small[me], send.data(), 3, counts, recv, "migrate");
    EXPECT_EQ(recv.size(), grown) << name;
    EXPECT_EQ(recv.data(), where) << name << ": reallocated although large enough";
    EXPECT_EQ(recv.data()[5], value((me - 1 + p) % p, me, 1, 2)) << name;
  }
}

// Two patterns alternate (a forward exchange and its return trip on each); the neighbor
// strategy builds one graph per pattern and rebuilds only when the partners change.
TEST(Migrator, GraphPerPatternRebuiltOnlyWhenPartnersChange) {
  const int p = test::world_size();
  const Matrix next = ring(p, 1, 3), prev = ring(p, -1, 2);
  Matrix everyone = zeros(p);
  for (auto& row : everyone)
    for (long& c : row) c = 1;
  const bool grows = p >= 4;  // every other rank is more than {next, prev}
  for (const std::string& name : strategies()) {
    comm::Migrator mig(MPI_COMM_WORLD, kHost, name, world_locality(), nullptr);
    const bool graphs = name == "neighbor";
    bool ok = true;
    auto step = [&](const Matrix& m, int width, const std::string& pattern, long want_setups, const char* what) {
      exchange_and_return(mig, m, width, pattern, ok);
      EXPECT_EQ(mig.setups(), graphs ? want_setups : 0) << name << ": " << what;
    };
    step(next, 6, "migrate", 1, "first exchange of a pattern builds its graph");
    step(prev, 3, "ghost", 2, "a second pattern gets its own graph");
    step(next, 6, "migrate", 2, "the same partners reuse the graph (return trips included)");
    step(prev, 3, "ghost", 2, "the other pattern's graph is still cached");
    step(everyone, 3, "migrate", grows ? 3 : 2, "new partners rebuild");
    // Fewer partners: the larger graph serves the forward exchange, which leaves neighbours
    // idle, so the return trip rebuilds the graph smaller.
    step(next, 6, "migrate", grows ? 4 : 2, "idle neighbours in the last exchange: shrink");
    step(next, 6, "migrate", grows ? 4 : 2, "steady partners: no rebuild");
    EXPECT_TRUE(test::all_ranks(ok)) << name;
  }
}

TEST(Migrator, UnknownStrategyIsAnInputErrorListingEveryName) {
  try {
    comm::Migrator mig(MPI_COMM_WORLD, kHost, "allgather", world_locality(), nullptr);
    ADD_FAILURE() << "accepted an unknown strategy";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("allgather"), std::string::npos) << what;
    for (const auto& s : comm::migrate::registry()) EXPECT_NE(what.find(s.name), std::string::npos) << what;
  }
}

TEST(Migrator, BadInputFailsBeforeAnythingTravels) {
  const int me = test::world_rank(), p = test::world_size();
  for (const std::string& name : strategies()) {
    comm::CommStats stats;
    comm::Migrator mig(MPI_COMM_WORLD, kHost, name, world_locality(), &stats);
    std::vector<long> counts;
    exec::Buffer<double> recv;
    const double dummy[6] = {};
    EXPECT_THROW(mig.exchange(std::vector<long>(p + 1, 0), dummy, 6, counts, recv, "migrate"), Error) << name;
    std::vector<long> negative(p, 0);
    negative[0] = -1;
    EXPECT_THROW(mig.exchange(negative, dummy, 6, counts, recv, "migrate"), Error) << name;
    EXPECT_THROW(mig.exchange(std::vector<long>(p, 0), dummy, 0, counts, recv, "migrate"), Error) << name;
    if (p > 1) {  // a message over INT_MAX records: every rank refuses before sending anything
      std::vector<long> huge(p, 0);
      huge[(me + 1) % p] = long(INT_MAX) + 1;
      try {
        mig.exchange(huge, dummy, 6, counts, recv, "migrate");
        ADD_FAILURE() << name << ": accepted a message of more than INT_MAX records";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("MPI int"), std::string::npos) << e.what();
      }
      std::vector<long> self_mismatch(p, 0);
      self_mismatch[me] = 1;
      EXPECT_THROW(mig.exchange_known(std::vector<long>(p, 0), dummy, 6, self_mismatch, recv.data(), "migrate"), Error)
          << name;
    }
    EXPECT_TRUE(stats.stats().empty()) << name << ": a refused exchange was counted";
    bool ok = true;  // and the migrator still works afterwards
    exchange_and_return(mig, ring(p, 1, 2), 6, "migrate", ok);
    EXPECT_TRUE(test::all_ranks(ok)) << name;
  }
}

TEST(MigratorRegistry, NamesHelpAndBannerCoverEveryStrategy) {
  const std::string names = comm::migrate::strategy_names(), help = comm::migrate::strategy_help();
  for (const auto& s : comm::migrate::registry()) {
    EXPECT_NE(names.find(s.name), std::string::npos);
    EXPECT_NE(help.find(s.description), std::string::npos);
    EXPECT_FALSE(std::string(s.description).empty());
    if (!s.unavailable().empty()) continue;
    comm::Migrator mig(MPI_COMM_WORLD, kHost, s.name, world_locality(), nullptr);
    EXPECT_EQ(mig.describe().rfind(s.name, 0), 0u) << mig.describe();
  }
}
