// Migration by the dense collectives: every rank pair takes part, empty or not. The baseline the
// sparse strategies are measured against.
#include <memory>

#include "beatnik/comm/migrate/migrate_strategy.hpp"
#include "beatnik/comm/mpi_check.hpp"

namespace beatnik::comm::migrate {
namespace {

class Alltoallv final : public Strategy {
 public:
  explicit Alltoallv(const Setup& s) : comm_(s.comm) {
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }

  void exchange(const std::vector<long>& send_counts, const char* send, Record rec,
                std::vector<long>& recv_counts, const PlaceFn& place, const std::string&) override {
    recv_counts.assign(size_, 0);
    check_mpi(MPI_Alltoall(send_counts.data(), 1, MPI_LONG, recv_counts.data(), 1, MPI_LONG, comm_),
              "MPI_Alltoall (migration counts)");
    char* recv = place(recv_counts);
    move(send_counts, send, rec, recv_counts, recv);
  }

  void exchange_known(const std::vector<long>& send_counts, const char* send, Record rec,
                      const std::vector<long>& recv_counts, char* recv, const std::string&) override {
    move(send_counts, send, rec, recv_counts, recv);
  }

 private:
  // The self block stays out of MPI (the Migrator copies it); an empty block gets displacement
  // 0, so only blocks that travel need an int offset.
  static void to_int(const std::vector<long>& counts, int self, std::vector<int>& c, std::vector<int>& d) {
    const std::vector<long> off = block_offsets(counts);
    c.assign(counts.size(), 0);
    d.assign(counts.size(), 0);
    for (std::size_t r = 0; r < counts.size(); ++r) {
      if (static_cast<int>(r) == self || counts[r] == 0) continue;
      c[r] = int_count(counts[r], "a message");
      d[r] = int_count(off[r], "an MPI_Alltoallv displacement");
    }
  }

  void move(const std::vector<long>& send_counts, const char* send, Record rec,
            const std::vector<long>& recv_counts, char* recv) {
    to_int(send_counts, rank_, sc_, sd_);
    to_int(recv_counts, rank_, rc_, rd_);
    check_mpi(MPI_Alltoallv(send, sc_.data(), sd_.data(), rec.type, recv, rc_.data(), rd_.data(), rec.type, comm_),
              "MPI_Alltoallv (migration)");
  }

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
  std::vector<int> sc_, sd_, rc_, rd_;
};

}  // namespace

std::unique_ptr<Strategy> make_alltoallv(const Setup& s) { return std::make_unique<Alltoallv>(s); }

}  // namespace beatnik::comm::migrate
