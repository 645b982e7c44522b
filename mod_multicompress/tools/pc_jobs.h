// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress: running independent jobs on a few threads.
#pragma once

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace mc::precompress {

/// CPUs this process may run on (taskset, cpuset containers), not just those online.
inline unsigned available_cpus() {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n > 0) return static_cast<unsigned>(n);
    }
    return std::max(1u, std::thread::hardware_concurrency());
}

/// Calls `job(k)` for every k in [0, count), from `jobs` threads (0: one per available CPU; never
/// more than `count`), each taking the next k in order; returns when all are done. `stop` set:
/// no further job starts.
template <class Job>
void run_jobs(std::size_t count, unsigned jobs, const std::atomic<bool>& stop, Job&& job) {
    if (count == 0) return;
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (;;) {
            const std::size_t k = next.fetch_add(1);
            if (k >= count || stop.load()) return;
            job(k);
        }
    };
    const std::size_t n = std::min<std::size_t>(jobs != 0 ? jobs : available_cpus(), count);
    std::vector<std::thread> threads;
    threads.reserve(n);
    for (std::size_t i = 0; i < n; ++i) threads.emplace_back(worker);
    for (std::thread& t : threads) t.join();
}

}  // namespace mc::precompress
