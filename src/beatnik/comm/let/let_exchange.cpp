#include "beatnik/comm/let/let_exchange.hpp"

#include "beatnik/base/error.hpp"
#include "beatnik/comm/let/registry.hpp"
#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/exec/scratch.hpp"

namespace beatnik::comm {

LetExchange::LetExchange(MPI_Comm comm, const std::string& strategy, std::vector<int> locality, CommStats* stats,
                         Transport* transport)
    : comm_(comm), name_(strategy) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  const let::StrategyEntry& entry = let::find_strategy(strategy);  // the same answer on every rank
  if (static_cast<int>(locality.size()) != size_)
    throw Error("LET: locality has " + std::to_string(locality.size()) + " entries for " + std::to_string(size_) +
                " ranks");
  strategy_ = entry.make(let::Setup{comm, std::move(locality), stats, transport});
}

LetExchange::~LetExchange() = default;

std::vector<double> LetExchange::allgather(const double* mine, int width) const {
  std::vector<double> all(std::size_t(size_) * width);
  check_mpi(MPI_Allgather(mine, width, MPI_DOUBLE, all.data(), width, MPI_DOUBLE, comm_),
            "MPI_Allgather (LET rank boxes)");
  return all;
}

const double* LetExchange::exchange(const std::vector<long>& send_counts, const double* send,
                                    std::vector<long>& recv_counts) {
  if (static_cast<int>(send_counts.size()) != size_ || send_counts[rank_] != 0)
    throw Error("LET: one block per rank, none for this rank itself");
  return strategy_->exchange(send_counts, send, recv_counts);
}

const double* LetExchange::exchange_device(const std::vector<long>& send_counts, std::vector<long>& recv_counts,
                                           long head, const std::function<long(const double*)>& host_part) {
  if (static_cast<int>(send_counts.size()) != size_ || send_counts[rank_] != 0)
    throw Error("LET: one block per rank, none for this rank itself");
  return strategy_->exchange_device(send_counts, recv_counts, head, host_part);
}

double* let::Strategy::send_buffer(long doubles) {
  exec::grow(send_, exec::Space::Host, std::size_t(doubles));
  return send_.data();
}

}  // namespace beatnik::comm
