#include "beatnik/comm/halo/rma_targets.hpp"

#include "beatnik/comm/mpi_check.hpp"

namespace beatnik::comm::halo {
namespace {
// Above the data tags (directions 0..7), so a set-up message never meets a halo message.
constexpr int kWhereTag = 64, kWhichTag = 128;
}  // namespace

RemoteSlots remote_slots(const Setup& s) {
  const std::size_t ns = s.sends.size(), nr = s.recvs.size();
  RemoteSlots out;
  out.send_disp.assign(ns, 0);
  out.send_slot.assign(ns, 0);
  out.recv_slot.assign(nr, 0);
  // Target -> origin: (receive offset, receive link index); origin -> target: send link index.
  std::vector<long> where_in(2 * ns), where_out(2 * nr), which_in(nr), which_out(ns);
  std::vector<MPI_Request> req;
  req.reserve(2 * (ns + nr));
  for (std::size_t k = 0; k < ns; ++k) {
    req.emplace_back();
    check_mpi(MPI_Irecv(&where_in[2 * k], 2, MPI_LONG, s.sends[k].peer, kWhereTag + s.sends[k].tag, s.comm, &req.back()),
              "MPI_Irecv (halo window set-up)");
  }
  for (std::size_t k = 0; k < nr; ++k) {
    req.emplace_back();
    check_mpi(MPI_Irecv(&which_in[k], 1, MPI_LONG, s.recvs[k].peer, kWhichTag + s.recvs[k].tag, s.comm, &req.back()),
              "MPI_Irecv (halo window set-up)");
  }
  for (std::size_t k = 0; k < nr; ++k) {
    where_out[2 * k] = s.recvs[k].offset;
    where_out[2 * k + 1] = static_cast<long>(k);
    req.emplace_back();
    check_mpi(MPI_Isend(&where_out[2 * k], 2, MPI_LONG, s.recvs[k].peer, kWhereTag + s.recvs[k].tag, s.comm, &req.back()),
              "MPI_Isend (halo window set-up)");
  }
  for (std::size_t k = 0; k < ns; ++k) {
    which_out[k] = static_cast<long>(k);
    req.emplace_back();
    check_mpi(MPI_Isend(&which_out[k], 1, MPI_LONG, s.sends[k].peer, kWhichTag + s.sends[k].tag, s.comm, &req.back()),
              "MPI_Isend (halo window set-up)");
  }
  if (!req.empty())
    check_mpi(MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE), "MPI_Waitall (halo window set-up)");
  for (std::size_t k = 0; k < ns; ++k) {
    out.send_disp[k] = where_in[2 * k];
    out.send_slot[k] = static_cast<int>(where_in[2 * k + 1]);
  }
  for (std::size_t k = 0; k < nr; ++k) out.recv_slot[k] = static_cast<int>(which_in[k]);
  return out;
}

MPI_Win receive_window(const Setup& s, MPI_Info info) {
  MPI_Win win = MPI_WIN_NULL;
  const MPI_Aint bytes = static_cast<MPI_Aint>(s.recv_size) * static_cast<MPI_Aint>(sizeof(double));
  int err;
  {
    ReturnMpiErrors returned(s.comm);  // a refusal is agreed on every rank below
    err = MPI_Win_create(s.recv, bytes, sizeof(double), info, s.comm, &win);
  }
  return agreed_window(err, win, s.comm, "MPI_Win_create over the receive buffer");
}

MPI_Win agreed_window(int err, MPI_Win win, MPI_Comm comm, const char* what) {
  int ok = err == MPI_SUCCESS ? 1 : 0;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_LAND, comm), "MPI_Allreduce (halo window check)");
  if (!ok) {
    // A window made on some ranks only is left alone: freeing it is collective.
    std::string why = "failed on another rank";
    if (err != MPI_SUCCESS) {
      char msg[MPI_MAX_ERROR_STRING];
      int len = 0;
      MPI_Error_string(err, msg, &len);
      why = std::string(msg, len);
    }
    throw NotAvailable(std::string("this MPI library cannot make the halo's RMA window here (") + what + ": " +
                       why + "); choose another --halo-strategy");
  }
  check_mpi(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler (halo)");
  return win;
}

bool lone_rank(const Setup& s) {
  int size = 1;
  MPI_Comm_size(s.comm, &size);
  return size == 1;
}

void put_message(const Setup& s, const RemoteSlots& slots, std::size_t k, MPI_Win win) {
  const Link& l = s.sends[k];
  const int n = int_count(l.count, s);
  check_mpi(MPI_Put(s.send + l.offset, n, MPI_DOUBLE, l.peer, slots.send_disp[k], n, MPI_DOUBLE, win), "MPI_Put (halo)");
}

void free_window(MPI_Win& win) noexcept {
  if (win != MPI_WIN_NULL && mpi_alive()) MPI_Win_free(&win);
  win = MPI_WIN_NULL;
}

}  // namespace beatnik::comm::halo
