// HostWorker (base/host_worker.hpp): jobs run in the order posted, on one thread other than the
// poster's, after its init; wait() returns once all of them have run and rethrows the first
// error, whose later jobs are dropped; the worker serves again after an error; the destructor
// runs what is still queued. The init's OpenMP thread count is the worker's alone (the tree
// solver's edge pieces rely on it: their team beside the lists' team).
#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "beatnik/base/host_worker.hpp"

using namespace beatnik;

TEST(HostWorker, RunsJobsInOrderOnItsOwnThreadAfterItsInit) {
  const std::thread::id me = std::this_thread::get_id();
  std::thread::id init_on, first_on;
  std::vector<int> order;
  bool first = true;
  HostWorker w([&] { init_on = std::this_thread::get_id(); });
  for (int k = 0; k < 50; ++k)
    w.post([&, k] {
      if (first) first_on = std::this_thread::get_id(), first = false;
      if (k % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));  // later ones queue up
      order.push_back(k);
    });
  w.wait();
  ASSERT_EQ(order.size(), 50u);
  for (int k = 0; k < 50; ++k) EXPECT_EQ(order[k], k);
  EXPECT_NE(init_on, me);
  EXPECT_EQ(first_on, init_on);
  EXPECT_FALSE(w.busy());
}

TEST(HostWorker, WaitRethrowsTheFirstErrorAndDropsTheJobsAfterIt) {
  std::atomic<int> ran{0};
  HostWorker w;
  w.post([&] { ++ran; });
  w.post([] { throw std::runtime_error("piece 2 failed"); });
  w.post([] { throw std::logic_error("never run"); });
  w.post([&] { ++ran; });
  try {
    w.wait();
    FAIL() << "wait() returned without the job's error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "piece 2 failed");
  }
  EXPECT_EQ(ran.load(), 1);
  w.wait();  // the error was taken: nothing more to report
  w.post([&] { ++ran; });
  w.wait();
  EXPECT_EQ(ran.load(), 2);
}

TEST(HostWorker, DestructorRunsWhatIsQueued) {
  std::atomic<int> ran{0};
  {
    HostWorker w;
    for (int k = 0; k < 20; ++k)
      w.post([&] {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        ++ran;
      });
  }
  EXPECT_EQ(ran.load(), 20);
}

TEST(HostWorker, InitsOpenMPThreadCountIsTheWorkersAlone) {
  const int mine = omp_get_max_threads();
  int theirs = 0, team = 0;
  HostWorker w([] { omp_set_num_threads(2); });
  w.post([&] {
    theirs = omp_get_max_threads();
#pragma omp parallel
#pragma omp single
    team = omp_get_num_threads();
  });
  w.wait();
  EXPECT_EQ(theirs, 2);
  EXPECT_EQ(team, 2);
  EXPECT_EQ(omp_get_max_threads(), mine);
}
