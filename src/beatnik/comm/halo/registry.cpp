#include "beatnik/comm/halo/registry.hpp"

#include "beatnik/comm/strategy_registry.hpp"
#include "beatnik/exec/space.hpp"

namespace beatnik::comm::halo {

// The factories, one per strategy file.
std::unique_ptr<Strategy> make_isend(const Setup& s);
std::unique_ptr<Strategy> make_persistent(const Setup& s);
std::unique_ptr<Strategy> make_neighbor(const Setup& s);
std::unique_ptr<Strategy> make_rma_fence(const Setup& s);
std::unique_ptr<Strategy> make_rma_pscw(const Setup& s);
std::unique_ptr<Strategy> make_rma_lock(const Setup& s);
std::unique_ptr<Strategy> make_device_ipc(const Setup& s);

namespace {

// With NCCL the halo is grouped ncclSend/ncclRecv on the device: no MPI strategy runs. The
// default is accepted (nothing to choose), device-ipc replaces the NCCL halo (it moves no bytes
// through a transport), any other name is refused rather than ignored.
std::string not_over_nccl(TransportKind kind) {
  if (kind != TransportKind::Nccl) return "";
  return "with --gpu-transport nccl the halo exchange is grouped NCCL send/receives and no MPI strategy "
         "runs; use --gpu-transport staged or cuda-aware to choose one (device-ipc also runs beside NCCL)";
}

std::string any_mpi(TransportKind) { return ""; }

std::string two_sided(TransportKind kind) { return not_over_nccl(kind); }

// Neighbourhood collectives and the RMA calls used (lock_all, flush, fetch_and_op) are MPI 3;
// asked at run time, since the header may be newer than the library.
std::string mpi3() {
  int major = 0, minor = 0;
  MPI_Get_version(&major, &minor);
  if (major >= 3) return "";
  return "the MPI library implements MPI " + std::to_string(major) + "." + std::to_string(minor) +
         "; this strategy needs MPI 3";
}

std::string collective(TransportKind kind) {
  if (std::string why = not_over_nccl(kind); !why.empty()) return why;
  return mpi3();
}

// Windows over device memory (cuda-aware) are beyond what MPI libraries promise for RMA: refused
// with a way out rather than risking a crash inside MPI.
std::string one_sided(TransportKind kind) {
  if (std::string why = collective(kind); !why.empty()) return why;
  if (kind == TransportKind::CudaAware)
    return "RMA windows over device memory are not supported; use --gpu-transport staged (windows over "
           "pinned host buffers)";
  return "";
}

// GPU memory written by the sender's pack kernel over CUDA IPC: a CUDA build and -x cuda. MPI
// carries only the signals, so any GPU transport will do (with NCCL the FFT reshapes still use it).
std::string device_only(TransportKind kind) {
  if (!exec::cuda_built()) return "this beatnik was built without the CUDA backend";
  if (kind == TransportKind::Host) return "it moves device memory: run with -x cuda";
  return "";
}

}  // namespace

const std::vector<StrategyEntry>& registry() {
  static const std::vector<StrategyEntry> all = {
      {"isend", "MPI_Irecv + MPI_Isend per neighbour, MPI_Waitall (the default)", any_mpi, make_isend},
      {"persistent", "MPI_Recv_init + MPI_Send_init made once, MPI_Startall + MPI_Waitall per exchange", two_sided,
       make_persistent},
      {"neighbor", "MPI_Ineighbor_alltoallv on a graph communicator of the 8 (or 4) neighbours, made once",
       collective, make_neighbor},
      {"rma-fence", "MPI_Put into the neighbours' receive windows between two MPI_Win_fence", one_sided,
       make_rma_fence},
      {"rma-pscw", "MPI_Put between MPI_Win_post/start and MPI_Win_complete/wait (neighbours only)", one_sided,
       make_rma_pscw},
      {"rma-lock", "passive target: MPI_Put + MPI_Win_flush, then a flag the target waits on (and a ready flag "
                   "back)",
       one_sided, make_rma_lock},
      {"device-ipc", "GPU one-sided: the pack kernel writes into the neighbour GPU's buffer (CUDA IPC), an IPC event "
                     "and a zero-byte MPI message signal it (-x cuda, ranks of one node)",
       device_only, make_device_ipc, true},
  };
  return all;
}

const StrategyEntry& find_strategy(const std::string& name, TransportKind kind) {
  for (const StrategyEntry& e : registry()) {
    if (name != e.name) continue;
    const std::string why = e.unavailable(kind);
    if (!why.empty()) throw NotAvailable("halo strategy " + name + ": " + why);
    return e;
  }
  throw InputError("unknown halo strategy '" + name + "': choose " + strategy_names());
}

std::string strategy_names() { return registry_names(registry()); }

std::string strategy_help() { return registry_help(registry(), 11); }

}  // namespace beatnik::comm::halo
