#include "beatnik/comm/message_trace.hpp"

#include "beatnik/comm/context.hpp"

namespace beatnik::comm {

int MessageTrace::world_rank(MPI_Comm comm, int peer) {
  auto it = ranks_.find(comm);
  if (it == ranks_.end()) it = ranks_.emplace(comm, ranks_in(comm, world_)).first;
  return it->second.at(static_cast<std::size_t>(peer));
}

}  // namespace beatnik::comm
