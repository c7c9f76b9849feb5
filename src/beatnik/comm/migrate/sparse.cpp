// Migration where only ranks with data talk: the NBX sparse dynamic exchange (Hoefler,
// Siebert, Lumsdaine, "Scalable communication protocols for dynamic sparse data exchange",
// PPoPP 2010). Each rank sends a synchronous-mode message to every rank it has records for and
// receives whatever arrives; a synchronous send completes only once it is matched, so when a
// rank's own sends are all done it enters a nonblocking barrier, and when the barrier completes
// every message of the exchange has been received. No counts travel separately and no rank
// pair without data exchanges anything; the cost is one extra copy of the received records
// (they arrive in any order and are put in rank order afterwards).
#include <memory>

#include "beatnik/comm/migrate/migrate_strategy.hpp"
#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/exec/memory.hpp"

namespace beatnik::comm::migrate {
namespace {

class Sparse final : public Strategy {
 public:
  explicit Sparse(const Setup& s) : space_(s.mpi_space) {
    // Its own communicator, so that the wildcard probes see only this pattern's messages.
    check_mpi(MPI_Comm_dup(s.comm, &comm_), "MPI_Comm_dup (sparse migration)");
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    arrived_.resize(size_);
  }
  ~Sparse() override { free_comm(comm_); }

  void exchange(const std::vector<long>& send_counts, const char* send, Record rec,
                std::vector<long>& recv_counts, const PlaceFn& place, const std::string&) override {
    // A rank that has left exchange k may already send for k+1 to a rank still probing for k,
    // never for k+2 (that needs the probing rank in k+1's barrier): two tags keep them apart.
    const int tag = kDiscoverTag + (round_++ & 1);
    const std::vector<long> off = block_offsets(send_counts);
    requests_.clear();
    for (int r = 0; r < size_; ++r) {
      if (r == rank_ || send_counts[r] == 0) continue;
      requests_.emplace_back();
      check_mpi(MPI_Issend(send + off[r] * rec.bytes, int_count(send_counts[r], "a message"), rec.type, r, tag,
                           comm_, &requests_.back()),
                "MPI_Issend (sparse migration)");
    }
    recv_counts.assign(size_, 0);
    recv_counts[rank_] = send_counts[rank_];
    MPI_Request barrier = MPI_REQUEST_NULL;
    bool in_barrier = false;
    int done = 0;
    while (!done) {
      int flag = 0;
      MPI_Status st;
      check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, tag, comm_, &flag, &st), "MPI_Iprobe (sparse migration)");
      if (flag) receive(st, rec, tag, recv_counts);
      if (in_barrier) {
        check_mpi(MPI_Test(&barrier, &done, MPI_STATUS_IGNORE), "MPI_Test (sparse migration barrier)");
      } else {
        int sent = 0;
        check_mpi(MPI_Testall(static_cast<int>(requests_.size()), requests_.data(), &sent, MPI_STATUSES_IGNORE),
                  "MPI_Testall (sparse migration sends)");
        if (sent) {
          check_mpi(MPI_Ibarrier(comm_, &barrier), "MPI_Ibarrier (sparse migration)");
          in_barrier = true;
        }
      }
    }
    char* recv = place(recv_counts);
    const std::vector<long> roff = block_offsets(recv_counts);
    for (int r = 0; r < size_; ++r)
      if (r != rank_ && recv_counts[r] > 0)
        exec::copy_bytes(recv + roff[r] * rec.bytes, space_, arrived_[r].data(), space_,
                         std::size_t(recv_counts[r]) * rec.bytes);
  }

  // Receivers know their senders: plain point-to-point between the pairs that have data.
  void exchange_known(const std::vector<long>& send_counts, const char* send, Record rec,
                      const std::vector<long>& recv_counts, char* recv, const std::string&) override {
    const std::vector<long> soff = block_offsets(send_counts), roff = block_offsets(recv_counts);
    requests_.clear();
    for (int r = 0; r < size_; ++r) {
      if (r == rank_ || recv_counts[r] == 0) continue;
      requests_.emplace_back();
      check_mpi(MPI_Irecv(recv + roff[r] * rec.bytes, int_count(recv_counts[r], "a message"), rec.type, r,
                          kKnownTag, comm_, &requests_.back()),
                "MPI_Irecv (sparse migration)");
    }
    for (int r = 0; r < size_; ++r) {
      if (r == rank_ || send_counts[r] == 0) continue;
      requests_.emplace_back();
      check_mpi(MPI_Isend(send + soff[r] * rec.bytes, int_count(send_counts[r], "a message"), rec.type, r,
                          kKnownTag, comm_, &requests_.back()),
                "MPI_Isend (sparse migration)");
    }
    check_mpi(MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE),
              "MPI_Waitall (sparse migration)");
  }

 private:
  static constexpr int kDiscoverTag = 11;  // and 12
  static constexpr int kKnownTag = 13;

  // The probed message, into the source's arrival buffer (kept between exchanges, grown when
  // too small: at most one message per source per exchange).
  void receive(const MPI_Status& st, Record rec, int tag, std::vector<long>& recv_counts) {
    int n = 0;
    check_mpi(MPI_Get_count(&st, rec.type, &n), "MPI_Get_count (sparse migration)");
    if (n == MPI_UNDEFINED) throw Error("sparse migration: a message that is not whole records arrived");
    const int src = st.MPI_SOURCE;
    const std::size_t bytes = std::size_t(n) * rec.bytes;
    if (arrived_[src].size() < bytes) arrived_[src] = exec::Buffer<char>(space_, bytes);
    check_mpi(MPI_Recv(arrived_[src].data(), n, rec.type, src, tag, comm_, MPI_STATUS_IGNORE),
              "MPI_Recv (sparse migration)");
    recv_counts[src] = n;
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  exec::Space space_;
  unsigned round_ = 0;
  std::vector<MPI_Request> requests_;
  std::vector<exec::Buffer<char>> arrived_;  // per source rank, in the MPI space
};

}  // namespace

std::unique_ptr<Strategy> make_sparse(const Setup& s) { return std::make_unique<Sparse>(s); }

}  // namespace beatnik::comm::migrate
