// Migration by neighbourhood collectives on a distributed graph communicator whose neighbours
// are this rank's partners (the ranks it sends to or receives from). One graph per pattern
// name, symmetric (neighbours = in ∪ out), so an exchange and its return trip (counts
// swapped) share it. Building a graph is collective and not cheap, so each exchange first asks
// every rank one bit (an MPI_Allreduce): does it have a partner outside its graph, or did its
// last exchange on this graph leave some neighbour idle? Only then is the graph rebuilt: the
// in-neighbours are discovered by an MPI_Alltoall of the counts (or known, for exchange_known).
// Growth is caught before the data moves; shrinking one exchange later.
#include <map>
#include <memory>

#include "beatnik/comm/migrate/migrate_strategy.hpp"
#include "beatnik/comm/mpi_check.hpp"

namespace beatnik::comm::migrate {
namespace {

struct Graph {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<int> peers;  // neighbours in rank order (never this rank: self is a local copy)
  std::vector<int> slot;   // communicator rank -> index in peers, or -1
  bool idle = false;       // some neighbour had no records either way in the last exchange
};

class Neighbor final : public Strategy {
 public:
  explicit Neighbor(const Setup& s) : comm_(s.comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~Neighbor() override {
    for (auto& [name, g] : graphs_) free_comm(g.comm);
  }

  void exchange(const std::vector<long>& send_counts, const char* send, Record rec,
                std::vector<long>& recv_counts, const PlaceFn& place, const std::string& pattern) override {
    recv_counts.assign(size_, 0);
    Graph* g = current(pattern, send_counts, nullptr);
    if (!g) {  // new partners somewhere: discover who sends here, then rebuild
      check_mpi(MPI_Alltoall(send_counts.data(), 1, MPI_LONG, recv_counts.data(), 1, MPI_LONG, comm_),
                "MPI_Alltoall (migration counts)");
      g = &build(pattern, send_counts, recv_counts);
    } else {
      const std::size_t n = g->peers.size();
      out_.resize(n + 1);  // + 1: never a null buffer for MPI
      in_.resize(n + 1);
      for (std::size_t k = 0; k < n; ++k) out_[k] = send_counts[g->peers[k]];
      check_mpi(MPI_Neighbor_alltoall(out_.data(), 1, MPI_LONG, in_.data(), 1, MPI_LONG, g->comm),
                "MPI_Neighbor_alltoall (migration counts)");
      for (std::size_t k = 0; k < n; ++k) recv_counts[g->peers[k]] = in_[k];
      recv_counts[rank_] = send_counts[rank_];
    }
    char* recv = place(recv_counts);
    move(*g, send_counts, send, rec, recv_counts, recv);
  }

  void exchange_known(const std::vector<long>& send_counts, const char* send, Record rec,
                      const std::vector<long>& recv_counts, char* recv, const std::string& pattern) override {
    Graph* g = current(pattern, send_counts, &recv_counts);
    if (!g) g = &build(pattern, send_counts, recv_counts);
    move(*g, send_counts, send, rec, recv_counts, recv);
  }

  long setups() const override { return builds_; }

 private:
  // The cached graph of `pattern` when it still fits every rank's partners, else null (the
  // same answer on every rank: patterns are used collectively, and the flag is reduced).
  Graph* current(const std::string& pattern, const std::vector<long>& send_counts, const std::vector<long>* recv_counts) {
    auto it = graphs_.find(pattern);
    if (it == graphs_.end()) return nullptr;
    Graph& g = it->second;
    int stale = g.idle ? 1 : 0;
    for (int r = 0; r < size_ && !stale; ++r) {
      if (r == rank_) continue;
      const bool partner = send_counts[r] > 0 || (recv_counts && (*recv_counts)[r] > 0);
      if (partner && g.slot[r] < 0) stale = 1;
    }
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &stale, 1, MPI_INT, MPI_LOR, comm_),
              "MPI_Allreduce (migration graph check)");
    return stale ? nullptr : &g;
  }

  // Collective. Neighbours: every rank this one sends to or receives from. Symmetric on every
  // rank pair, as MPI_Dist_graph_create_adjacent requires, because the counts agree.
  Graph& build(const std::string& pattern, const std::vector<long>& send_counts, const std::vector<long>& recv_counts) {
    Graph& g = graphs_[pattern];
    free_comm(g.comm);
    g.peers.clear();
    g.slot.assign(size_, -1);
    for (int r = 0; r < size_; ++r) {
      if (r == rank_ || (send_counts[r] == 0 && recv_counts[r] == 0)) continue;
      g.slot[r] = static_cast<int>(g.peers.size());
      g.peers.push_back(r);
    }
    const int n = static_cast<int>(g.peers.size());
    int none = 0;
    const int* peers = n ? g.peers.data() : &none;
    // reorder = 0: the ranks must stay those of comm_, the counts are indexed by them.
    check_mpi(MPI_Dist_graph_create_adjacent(comm_, n, peers, MPI_UNWEIGHTED, n, peers, MPI_UNWEIGHTED,
                                             MPI_INFO_NULL, 0, &g.comm),
              "MPI_Dist_graph_create_adjacent (migration)");
    g.idle = false;
    ++builds_;
    return g;
  }

  void move(Graph& g, const std::vector<long>& send_counts, const char* send, Record rec,
            const std::vector<long>& recv_counts, char* recv) {
    const std::vector<long> soff = block_offsets(send_counts), roff = block_offsets(recv_counts);
    const std::size_t n = g.peers.size();
    sc_.assign(n + 1, 0);
    sd_.assign(n + 1, 0);
    rc_.assign(n + 1, 0);
    rd_.assign(n + 1, 0);
    g.idle = false;
    for (std::size_t k = 0; k < n; ++k) {
      const int r = g.peers[k];
      if (send_counts[r] > 0) {
        sc_[k] = int_count(send_counts[r], "a message");
        sd_[k] = int_count(soff[r], "an MPI_Neighbor_alltoallv displacement");
      }
      if (recv_counts[r] > 0) {
        rc_[k] = int_count(recv_counts[r], "a message");
        rd_[k] = int_count(roff[r], "an MPI_Neighbor_alltoallv displacement");
      }
      if (send_counts[r] == 0 && recv_counts[r] == 0) g.idle = true;
    }
    check_mpi(MPI_Neighbor_alltoallv(send, sc_.data(), sd_.data(), rec.type, recv, rc_.data(), rd_.data(), rec.type,
                                     g.comm),
              "MPI_Neighbor_alltoallv (migration)");
  }

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  long builds_ = 0;
  std::map<std::string, Graph> graphs_;
  std::vector<long> out_, in_;
  std::vector<int> sc_, sd_, rc_, rd_;
};

}  // namespace

std::unique_ptr<Strategy> make_neighbor(const Setup& s) { return std::make_unique<Neighbor>(s); }

}  // namespace beatnik::comm::migrate
