#include "beatnik/base/host_worker.hpp"

#include <utility>

namespace beatnik {

HostWorker::HostWorker(std::function<void()> init) : init_(std::move(init)) {}

HostWorker::~HostWorker() {
  {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [&] { return jobs_.empty() && !running_; });
    stop_ = true;
  }
  work_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HostWorker::post(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  }
  work_.notify_one();
}

void HostWorker::wait() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [&] { return jobs_.empty() && !running_; });
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

bool HostWorker::busy() {
  std::lock_guard<std::mutex> lock(mu_);
  return running_ || !jobs_.empty();
}

void HostWorker::loop() {
  if (init_) init_();
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stop_ with nothing left
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    running_ = true;
    lock.unlock();
    std::exception_ptr err;
    try {
      job();
    } catch (...) {
      err = std::current_exception();
    }
    lock.lock();
    running_ = false;
    if (err && !error_) {
      error_ = err;
      jobs_.clear();  // the later jobs build on this one
    }
    if (jobs_.empty()) idle_.notify_all();
  }
}

}  // namespace beatnik
