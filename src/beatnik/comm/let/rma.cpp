// LET pull by one-sided gets (passive target): every rank copies its tree's sections (cluster
// records, proxies, particles; remote_walk.hpp) into its window, and every rank walks every
// other rank's tree itself, fetching with MPI_Get what the owner would have pushed to it.
//
// The window is made once (MPI_Win_allocate, every rank holds MPI_Win_lock_all on it for its
// whole life) and reused while each rank's tree fits its capacity; when one no longer does, all
// ranks remake it together, with room to spare (1.25x). Remade per BR call instead, the window's
// collective creation (memory registration, address exchange) would be paid three times per
// step for a tree that changes size by a few per cent; the price of reuse is one copy of the
// tree into the window, what the push pays packing its blocks.
//
// One call: an MPI_Allgather of every rank's section sizes (which also says whether the window
// must grow, and is the point after which no rank still reads the previous call's trees), the
// copy, MPI_Win_sync and an MPI_Barrier (every tree is in place), then the walks: each round
// issues one MPI_Get per owner still walking (an indexed datatype over all the spans asked) and
// one MPI_Win_flush_all, so a walk costs one round trip per tree level plus one for the sources
// and proxies, whatever the number of clusters, and the owners' walks share their round trips.
// The walks involve no collective and no action of the owner: a rank with no particles or an
// empty tree just has nothing to walk or nothing to be walked.
#include <algorithm>
#include <climits>
#include <string>

#include "beatnik/base/error.hpp"
#include "beatnik/base/timers.hpp"
#include "beatnik/comm/let/let_strategy.hpp"
#include "beatnik/comm/message_trace.hpp"
#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/exec/scratch.hpp"

namespace beatnik::comm::let {
namespace {

bool mpi_alive() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  return !finalized;
}

int as_int(long v, const char* what) {
  if (v < 0 || v > INT_MAX) throw Error(std::string("LET rma: ") + what + " beyond an int (" + std::to_string(v) + ")");
  return static_cast<int>(v);
}

class Rma final : public Strategy {
 public:
  explicit Rma(const Setup& s) : comm_(s.comm), locality_(s.locality), stats_(s.stats) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~Rma() override { release(); }
  Rma(const Rma&) = delete;
  Rma& operator=(const Rma&) = delete;

  const double* exchange(const std::vector<long>&, const double*, std::vector<long>&) override {
    throw Error("LET rma pulls: the tree solver must call pull(), not exchange()");
  }
  bool pulls() const override { return true; }

  const double* pull(const std::vector<Section>& mine, RemoteWalk& walk, std::vector<long>& recv_counts) override {
    recv_counts.assign(size_, 0);
    if (stats_) stats_->add_call("let");
    MessageTrace* trace = stats_ ? stats_->trace() : nullptr;
    if (size_ == 1) {  // no other tree: no window, nothing to walk
      if (trace) trace->complete("let", this, wall_seconds());
      return recv_.data();
    }
    expose(mine);
    const int ns = static_cast<int>(mine.size());
    std::vector<std::vector<Span>> want(size_);
    std::vector<std::vector<double>> got(size_);
    for (int o = 0; o < size_; ++o) {
      if (o == rank_) continue;
      const long* sz = &sizes_[size_t(o) * (ns + 1) + 1];
      walk.start(o, std::vector<long>(sz, sz + ns), want[o]);
    }
    for (;;) {
      bool any = false;
      const double t0 = trace ? wall_seconds() : 0.0;
      for (int o = 0; o < size_; ++o) {
        if (want[o].empty()) continue;
        any = true;
        get(o, ns, want[o], got[o]);
      }
      if (!any) break;
      check_mpi(MPI_Win_flush_all(win_), "MPI_Win_flush_all (LET)");  // this round's gets are here
      // --trace: each get from its owner, spanning the round (posted together, flushed together).
      const double t1 = trace ? wall_seconds() : 0.0;
      for (int o = 0; trace && o < size_; ++o)
        if (!want[o].empty() && !got[o].empty())
          trace->get("let", comm_, o, long(got[o].size() * sizeof(double)), t0, t1);
      for (int o = 0; o < size_; ++o) {
        if (want[o].empty()) continue;
        want[o].clear();
        walk.next(o, got[o], want[o]);
      }
    }
    long total = 0;
    for (int o = 0; o < size_; ++o)
      if (o != rank_) total += recv_counts[o] = walk.block_size(o);
    exec::grow(recv_, exec::Space::Host, std::size_t(total));
    double* at = recv_.data();
    for (int o = 0; o < size_; ++o) {
      if (recv_counts[o] > 0) walk.write_block(o, at);
      at += recv_counts[o];
    }
    if (trace) trace->complete("let", this, wall_seconds());  // the call's count moves on
    return recv_.data();
  }

 private:
  // Every rank's sections in its window, the window grown first where one does not fit.
  void expose(const std::vector<Section>& mine) {
    const int ns = static_cast<int>(mine.size());
    long need = 0;
    std::vector<long> rec(ns + 1);
    for (int k = 0; k < ns; ++k) need += rec[k + 1] = mine[k].size;
    rec[0] = need > capacity_ || win_ == MPI_WIN_NULL;
    sizes_.resize(size_t(size_) * (ns + 1));
    check_mpi(MPI_Allgather(rec.data(), ns + 1, MPI_LONG, sizes_.data(), ns + 1, MPI_LONG, comm_),
              "MPI_Allgather (LET section sizes)");
    bool grow = false;
    for (int r = 0; r < size_; ++r) grow = grow || sizes_[size_t(r) * (ns + 1)] != 0;
    if (grow) remake(std::max(capacity_, need + need / 4));
    long off = 0;
    for (const Section& s : mine) {
      std::copy(s.data, s.data + s.size, base_ + off);
      off += s.size;
    }
    check_mpi(MPI_Win_sync(win_), "MPI_Win_sync (LET)");  // the copy, visible to the others' gets
    check_mpi(MPI_Barrier(comm_), "MPI_Barrier (LET trees exposed)");
  }

  // Collective: a new window of `capacity` doubles on this rank (each rank its own).
  void remake(long capacity) {
    release();
    as_int(capacity, "a window of doubles");  // displacements are ints in the datatypes
    int err;
    {
      ReturnMpiErrors returned(comm_);  // a refusal is agreed on every rank below
      err = MPI_Win_allocate(MPI_Aint(std::max(capacity, 1L)) * MPI_Aint(sizeof(double)), sizeof(double),
                             MPI_INFO_NULL, comm_, &base_, &win_);
    }
    int ok = err == MPI_SUCCESS;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm_), "MPI_Allreduce (LET window check)");
    if (!ok) {
      char msg[MPI_MAX_ERROR_STRING] = "failed on another rank";
      int len = 0;
      if (err != MPI_SUCCESS) MPI_Error_string(err, msg, &len);
      if (err == MPI_SUCCESS) MPI_Win_free(&win_);
      win_ = MPI_WIN_NULL;
      throw NotAvailable(std::string("LET strategy rma: this MPI library cannot make the window (MPI_Win_allocate: ") +
                         msg + "); choose --let-strategy alltoallv or sparse");
    }
    capacity_ = capacity;
    check_mpi(MPI_Win_set_errhandler(win_, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler (LET)");
    check_mpi(MPI_Win_lock_all(MPI_MODE_NOCHECK, win_), "MPI_Win_lock_all (LET)");
  }

  void release() noexcept {
    if (win_ != MPI_WIN_NULL && mpi_alive()) {
      MPI_Win_unlock_all(win_);
      MPI_Win_free(&win_);
    }
    win_ = MPI_WIN_NULL;
    base_ = nullptr;
    capacity_ = 0;
  }

  // One MPI_Get of owner o's spans (into `into`, concatenated in order), accounted here: the
  // owner does not see it (--trace records it here too, as a get from o).
  void get(int o, int ns, const std::vector<Span>& spans, std::vector<double>& into) {
    const long* sz = &sizes_[size_t(o) * (ns + 1) + 1];
    std::vector<long> first(ns + 1, 0);  // each section's first double in o's window
    for (int k = 0; k < ns; ++k) first[k + 1] = first[k] + sz[k];
    len_.clear();
    disp_.clear();
    long total = 0;
    for (const Span& s : spans) {
      if (s.section < 0 || s.section >= ns || s.offset < 0 || s.count < 0 || s.offset + s.count > sz[s.section])
        throw Error("LET rma: a span outside rank " + std::to_string(o) + "'s section " + std::to_string(s.section));
      if (s.count == 0) continue;
      const long d = first[s.section] + s.offset;
      if (!disp_.empty() && long(disp_.back()) + len_.back() == d) len_.back() += as_int(s.count, "a span");
      else {
        disp_.push_back(as_int(d, "a displacement"));
        len_.push_back(as_int(s.count, "a span"));
      }
      total += s.count;
    }
    into.resize(total);
    if (total == 0) return;
    const int n = as_int(total, "a round's doubles");
    if (disp_.size() == 1) {
      check_mpi(MPI_Get(into.data(), n, MPI_DOUBLE, o, disp_[0], n, MPI_DOUBLE, win_), "MPI_Get (LET)");
    } else {
      MPI_Datatype t;
      check_mpi(MPI_Type_indexed(static_cast<int>(disp_.size()), len_.data(), disp_.data(), MPI_DOUBLE, &t),
                "MPI_Type_indexed (LET spans)");
      check_mpi(MPI_Type_commit(&t), "MPI_Type_commit (LET spans)");
      check_mpi(MPI_Get(into.data(), n, MPI_DOUBLE, o, 0, 1, t, win_), "MPI_Get (LET)");
      check_mpi(MPI_Type_free(&t), "MPI_Type_free (LET spans)");  // the get keeps it until done
    }
    if (stats_) stats_->add_message("let", locality_[o], total * long(sizeof(double)));
  }

  MPI_Comm comm_;
  std::vector<int> locality_;
  CommStats* stats_;
  int rank_ = 0, size_ = 1;
  MPI_Win win_ = MPI_WIN_NULL;
  double* base_ = nullptr;
  long capacity_ = 0;          // doubles in this rank's window
  std::vector<long> sizes_;    // per rank: grow flag, then its section sizes
  std::vector<int> len_, disp_;
};

}  // namespace

std::unique_ptr<Strategy> make_rma(const Setup& s) { return std::make_unique<Rma>(s); }

}  // namespace beatnik::comm::let
