#include "beatnik/exec/stream.hpp"

namespace beatnik::exec {
namespace {
// One per thread: a capture is thread-local (exec/graph.cpp), and so is the stream it uses.
thread_local void* g_work_stream = nullptr;
}  // namespace

void* work_stream() { return g_work_stream; }

WorkStreamScope::WorkStreamScope(void* stream) : previous_(g_work_stream) { g_work_stream = stream; }
WorkStreamScope::~WorkStreamScope() { g_work_stream = previous_; }

}  // namespace beatnik::exec
