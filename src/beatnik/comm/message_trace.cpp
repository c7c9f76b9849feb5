#include "beatnik/comm/message_trace.hpp"

namespace beatnik::comm {

int MessageTrace::world_rank(MPI_Comm comm, int peer) {
  auto it = ranks_.find(comm);
  if (it == ranks_.end()) {
    int n = 0;
    MPI_Comm_size(comm, &n);
    MPI_Group g, w;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(world_, &w);
    std::vector<int> in(n), out(n);
    for (int r = 0; r < n; ++r) in[r] = r;
    MPI_Group_translate_ranks(g, n, in.data(), w, out.data());
    MPI_Group_free(&g);
    MPI_Group_free(&w);
    it = ranks_.emplace(comm, std::move(out)).first;
  }
  return it->second.at(static_cast<std::size_t>(peer));
}

}  // namespace beatnik::comm
