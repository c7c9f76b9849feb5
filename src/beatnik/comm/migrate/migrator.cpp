#include "beatnik/comm/migrate/migrator.hpp"

#include <numeric>

#include "beatnik/base/error.hpp"
#include "beatnik/comm/migrate/migrate_strategy.hpp"
#include "beatnik/comm/migrate/registry.hpp"
#include "beatnik/comm/message_trace.hpp"
#include "beatnik/comm/mpi_check.hpp"
#include "beatnik/base/timers.hpp"

namespace beatnik::comm {

using migrate::block_offsets;

namespace {
long total(const std::vector<long>& counts) { return std::accumulate(counts.begin(), counts.end(), 0L); }
}  // namespace

Migrator::Migrator(MPI_Comm comm, exec::Space space, const std::string& strategy, std::vector<int> locality,
                   CommStats* stats, Transport* transport)
    : comm_(comm),
      space_(space),
      name_(strategy),
      locality_(std::move(locality)),
      stats_(stats),
      transport_(transport ? transport : &basic_transport(space)) {
  MPI_Comm_rank(comm, &rank_);
  MPI_Comm_size(comm, &size_);
  const migrate::StrategyEntry& entry = migrate::find_strategy(strategy);  // same answer on every rank
  if (transport_->space() != space) throw Error("migration: transport and records live in different spaces");
  if (static_cast<int>(locality_.size()) != size_)
    throw Error("migration: locality has " + std::to_string(locality_.size()) + " entries for " +
                std::to_string(size_) + " ranks");
  const TransportKind k = transport_->kind();
  mpi_space_ = (k == TransportKind::CudaAware || k == TransportKind::Nccl) ? exec::Space::Device : exec::Space::Host;
  strategy_ = entry.make(migrate::Setup{comm_, mpi_space_});
}

Migrator::~Migrator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    for (auto& [width, t] : types_) MPI_Type_free(&t);
}

std::string Migrator::describe() const {
  if (transport_->uses_nccl())
    return name_ + " asked; with the nccl transport every strategy runs as counts by MPI_Alltoall, "
                   "records by grouped NCCL send/receive";
  return name_ + ": " + migrate::find_strategy(name_).description;
}

long Migrator::setups() const { return strategy_->setups(); }

// Checked before anything travels, so that bad counts fail where they were made. A block for
// another rank travels as one message of int count.
void Migrator::check_counts(const std::vector<long>& counts, const char* what) const {
  if (static_cast<int>(counts.size()) != size_)
    throw Error(std::string("migration: ") + what + " has " + std::to_string(counts.size()) + " entries for " +
                std::to_string(size_) + " ranks");
  for (int r = 0; r < size_; ++r) {
    if (counts[r] < 0) throw Error(std::string("migration: negative ") + what + " entry for rank " + std::to_string(r));
    if (r != rank_) migrate::int_count(counts[r], "a message");
  }
}

MPI_Datatype Migrator::record_type(int width) {
  auto it = types_.find(width);
  if (it != types_.end()) return it->second;
  MPI_Datatype t;
  check_mpi(MPI_Type_contiguous(width, MPI_DOUBLE, &t), "MPI_Type_contiguous (migration record)");
  check_mpi(MPI_Type_commit(&t), "MPI_Type_commit (migration record)");
  types_[width] = t;
  return t;
}

void Migrator::self_copy(const std::vector<long>& send_counts, const char* send, const std::vector<long>& recv_counts,
                         char* recv, long record_bytes, exec::Space space) const {
  const long n = send_counts[rank_];
  if (n == 0) return;
  long so = 0, ro = 0;
  for (int r = 0; r < rank_; ++r) {
    so += send_counts[r];
    ro += recv_counts[r];
  }
  exec::copy_bytes(recv + ro * record_bytes, space, send + so * record_bytes, space, std::size_t(n) * record_bytes);
}

void Migrator::copy_others(const std::vector<long>& counts, char* dst, exec::Space dst_space, const char* src,
                           exec::Space src_space, long record_bytes) const {
  long before = 0;
  for (int r = 0; r < rank_; ++r) before += counts[r];
  const long after = total(counts) - before - counts[rank_];
  const long tail = (before + counts[rank_]) * record_bytes;
  if (before > 0) exec::copy_bytes(dst, dst_space, src, src_space, std::size_t(before) * record_bytes);
  if (after > 0) exec::copy_bytes(dst + tail, dst_space, src + tail, src_space, std::size_t(after) * record_bytes);
}

double Migrator::trace_start() const { return stats_ && stats_->trace() ? wall_seconds() : 0.0; }

void Migrator::account(const std::vector<long>& send_counts, const std::vector<long>& recv_counts,
                       long record_bytes, const std::string& pattern, double t0) {
  if (!stats_) return;
  stats_->add_call(pattern);
  for (int r = 0; r < size_; ++r)
    if (send_counts[r] > 0) stats_->add_message(pattern, locality_[r], send_counts[r] * record_bytes);
  if (MessageTrace* tr = stats_->trace()) {
    for (int r = 0; r < size_; ++r) {
      if (send_counts[r] > 0) tr->send(pattern, this, comm_, r, send_counts[r] * record_bytes, t0);
      if (recv_counts[r] > 0) tr->recv(pattern, this, comm_, r, recv_counts[r] * record_bytes, t0);
    }
    tr->complete(pattern, this, wall_seconds());
  }
}

void Migrator::exchange(const std::vector<long>& send_counts, const double* send, int width,
                        std::vector<long>& recv_counts, exec::Buffer<double>& recv, const std::string& pattern) {
  if (width < 1) throw Error("migration: records need a width of at least 1 double");
  const double t0 = trace_start();
  check_counts(send_counts, "send_counts");
  const long rb = long(width) * long(sizeof(double));
  // Room for n doubles in `recv`, in `space`.
  auto grow = [&](long n) {
    if (recv.size() < std::size_t(n)) recv = exec::Buffer<double>(space_, std::size_t(n));
    else if (n > 0 && recv.space() != space_) throw Error("migration: the receive buffer is in the wrong space");
    return recv.data();
  };
  if (transport_->uses_nccl()) {
    recv_counts.assign(size_, 0);
    check_mpi(MPI_Alltoall(send_counts.data(), 1, MPI_LONG, recv_counts.data(), 1, MPI_LONG, comm_),
              "MPI_Alltoall (migration counts)");
    double* r = grow(total(recv_counts) * width);
    nccl_move(send_counts, send, recv_counts, r, rb);
    account(send_counts, recv_counts, rb, pattern, t0);
    return;
  }
  const std::size_t send_bytes = std::size_t(total(send_counts)) * rb;
  const char* sp = stage_send(send_counts, send, send_bytes, rb);
  char* rp = nullptr;
  std::size_t recv_bytes = 0;
  bool placed = false;
  strategy_->exchange(send_counts, sp, migrate::Record{record_type(width), rb}, recv_counts,
                      [&](const std::vector<long>& counts) {
                        recv_bytes = std::size_t(total(counts)) * rb;
                        double* r = grow(total(counts) * width);
                        rp = static_cast<char*>(transport_->mpi_recv_buffer(r, recv_bytes, recv_stage_));
                        placed = true;
                        return rp;
                      },
                      pattern);
  if (!placed) throw Error("migration: strategy " + name_ + " never asked for a receive buffer");
  land(send_counts, send, sp, recv_counts, reinterpret_cast<char*>(recv.data()), rp, rb);
  account(send_counts, recv_counts, rb, pattern, t0);
}

void Migrator::exchange_known(const std::vector<long>& send_counts, const double* send, int width,
                              const std::vector<long>& recv_counts, double* recv, const std::string& pattern) {
  if (width < 1) throw Error("migration: records need a width of at least 1 double");
  const double t0 = trace_start();
  check_counts(send_counts, "send_counts");
  check_counts(recv_counts, "recv_counts");
  if (recv_counts[rank_] != send_counts[rank_])
    throw Error("migration: exchange_known receives " + std::to_string(recv_counts[rank_]) +
                " records from this rank itself but sends it " + std::to_string(send_counts[rank_]));
  const long rb = long(width) * long(sizeof(double));
  if (transport_->uses_nccl()) {
    nccl_move(send_counts, send, recv_counts, recv, rb);
    account(send_counts, recv_counts, rb, pattern, t0);
    return;
  }
  const std::size_t send_bytes = std::size_t(total(send_counts)) * rb;
  const std::size_t recv_bytes = std::size_t(total(recv_counts)) * rb;
  const char* sp = stage_send(send_counts, send, send_bytes, rb);
  char* rp = static_cast<char*>(transport_->mpi_recv_buffer(recv, recv_bytes, recv_stage_));
  strategy_->exchange_known(send_counts, sp, migrate::Record{record_type(width), rb}, recv_counts, rp, pattern);
  land(send_counts, send, sp, recv_counts, reinterpret_cast<char*>(recv), rp, rb);
  account(send_counts, recv_counts, rb, pattern, t0);
}

// Where MPI reads the records: the pointer itself, or (staged) a pinned host copy of every block
// but the own one, which stays on the device.
const char* Migrator::stage_send(const std::vector<long>& send_counts, const double* send, std::size_t bytes,
                                 long record_bytes) {
  if (transport_->kind() != TransportKind::Staged)
    return static_cast<const char*>(transport_->mpi_send_buffer(send, bytes, send_stage_));
  send_stage_.reserve(bytes);
  copy_others(send_counts, send_stage_.data(), exec::Space::Host, reinterpret_cast<const char*>(send), space_,
              record_bytes);
  return send_stage_.data();
}

// After MPI: the own block, and (staged) the received blocks from the pinned copy to the device.
void Migrator::land(const std::vector<long>& send_counts, const double* send, const char* mpi_send,
                    const std::vector<long>& recv_counts, char* recv, const char* mpi_recv, long record_bytes) {
  if (transport_->kind() != TransportKind::Staged) {
    self_copy(send_counts, mpi_send, recv_counts, const_cast<char*>(mpi_recv), record_bytes, mpi_space_);
    transport_->mpi_received(recv, mpi_recv, std::size_t(total(recv_counts)) * record_bytes);
    return;
  }
  copy_others(recv_counts, recv, space_, mpi_recv, exec::Space::Host, record_bytes);
  self_copy(send_counts, reinterpret_cast<const char*>(send), recv_counts, recv, record_bytes, space_);
}

// NCCL has no alltoallv and needs no count discovery of its own: one grouped send/receive
// over the ranks with data, queued behind the kernels that wrote `send`.
void Migrator::nccl_move(const std::vector<long>& send_counts, const double* send, const std::vector<long>& recv_counts,
                         double* recv, long record_bytes) {
  const std::vector<long> soff = block_offsets(send_counts), roff = block_offsets(recv_counts);
  sends_.clear();
  recvs_.clear();
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    if (send_counts[r] > 0) sends_.push_back(Message{r, soff[r] * record_bytes, send_counts[r] * record_bytes});
    if (recv_counts[r] > 0) recvs_.push_back(Message{r, roff[r] * record_bytes, recv_counts[r] * record_bytes});
  }
  self_copy(send_counts, reinterpret_cast<const char*>(send), recv_counts, reinterpret_cast<char*>(recv), record_bytes,
            exec::Space::Device);
  transport_->nccl_exchange(comm_, send, sends_.data(), static_cast<int>(sends_.size()), recv, recvs_.data(),
                            static_cast<int>(recvs_.size()));
}

}  // namespace beatnik::comm
