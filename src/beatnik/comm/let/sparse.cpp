// LET push where only ranks with data talk: the NBX sparse dynamic exchange (MPI_Issend,
// MPI_Iprobe, MPI_Ibarrier; comm/migrate/sparse.cpp). A rank far from another sends it only
// proxies, and a rank whose tree no target of another needs sends nothing at all.
#include "beatnik/comm/let/push.hpp"

namespace beatnik::comm::let {

std::unique_ptr<Strategy> make_sparse(const Setup& s) { return std::make_unique<Push>(s, "sparse"); }

}  // namespace beatnik::comm::let
