#pragma once
// One background host thread that runs posted jobs in order (the tree solver's edge stage on the
// device: its host part, keys, table specs and term lists, beside the next runs' lists). post()
// returns at once; wait() returns when every job posted so far has run, and rethrows the first
// exception a job threw (the jobs after it are dropped). The thread starts on the first post and
// runs `init` first (e.g. its OpenMP thread count, which is per thread); the destructor waits
// for the queue and joins.
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace beatnik {

class HostWorker {
 public:
  explicit HostWorker(std::function<void()> init = {});
  ~HostWorker();
  HostWorker(const HostWorker&) = delete;
  HostWorker& operator=(const HostWorker&) = delete;

  void post(std::function<void()> job);
  void wait();
  // Whether a job is queued or running (for checks: nothing may touch the jobs' data meanwhile).
  bool busy();

 private:
  void loop();

  std::function<void()> init_;
  std::mutex mu_;
  std::condition_variable work_, idle_;
  std::deque<std::function<void()>> jobs_;
  bool running_ = false, stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace beatnik
