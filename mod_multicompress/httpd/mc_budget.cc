// SPDX-License-Identifier: Apache-2.0
// The CPU budget: one controller per child, fed every 250 ms from the server-wide counters.
#include "mc_budget.h"

#include <apr_time.h>
#include <http_config.h>

#include <unistd.h>

#include <atomic>
#include <mutex>

#include "mc_config.h"
#include "mc_counters.h"

namespace mc::httpd {
namespace {

constexpr apr_time_t kInterval = apr_time_from_msec(250);

double g_budget = 0;  // set in post_config, read-only afterwards
unsigned g_cpus = 1;

// Per child. The thread that finds a sample due takes the mutex with try_lock: the others
// never wait, they use the step already there.
std::mutex g_sampling;
std::atomic<apr_time_t> g_next_sample{0};
std::atomic<std::uint8_t> g_step{0};
std::atomic<double> g_share{0};
mc::BudgetController g_controller;
std::uint64_t g_last_cpu_ns = 0;
apr_time_t g_last_time = 0;

void maybe_sample() {
    const apr_time_t now = apr_time_now();
    if (now < g_next_sample.load(std::memory_order_relaxed)) return;
    std::unique_lock<std::mutex> lock(g_sampling, std::try_to_lock);
    if (!lock.owns_lock() || now < g_next_sample.load(std::memory_order_relaxed)) return;
    g_next_sample.store(now + kInterval, std::memory_order_relaxed);
    const std::uint64_t cpu = counters_cpu_ns();
    if (g_last_time != 0 && now > g_last_time && cpu >= g_last_cpu_ns) {
        const auto wall_ns = static_cast<std::uint64_t>(now - g_last_time) * 1000;
        const mc::BudgetStep s = g_controller.sample(cpu - g_last_cpu_ns, wall_ns, g_cpus);
        g_step.store(static_cast<std::uint8_t>(s), std::memory_order_relaxed);
        g_share.store(g_controller.share(), std::memory_order_relaxed);
    }
    g_last_cpu_ns = cpu;
    g_last_time = now;
}

}  // namespace

int budget_post_config(apr_pool_t* /*pconf*/, apr_pool_t* /*plog*/, apr_pool_t* /*ptemp*/,
                       server_rec* s) noexcept {
    const auto* cfg = static_cast<const mc::Config*>(
        ap_get_module_config(s->lookup_defaults, &multicompress_module));
    g_budget = cfg != nullptr ? cfg->cpu_budget_share() : 0.0;
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    g_cpus = n > 0 ? static_cast<unsigned>(n) : 1;
    g_controller = mc::BudgetController(g_budget > 0 ? g_budget : 1.0);
    g_step.store(0);
    g_next_sample.store(0);
    g_last_time = 0;
    return OK;
}

mc::BudgetStep budget_step(const mc::Config& cfg) noexcept {
    if (g_budget <= 0 || cfg.cpu_budget_share() <= 0) return mc::BudgetStep::kNone;
    maybe_sample();
    return static_cast<mc::BudgetStep>(g_step.load(std::memory_order_relaxed));
}

double budget_share() noexcept {
    maybe_sample();  // what the page shows is this child's view now (measured with the budget
                     // Off too, so an administrator can see what a budget would act on)
    return g_share.load(std::memory_order_relaxed);
}

mc::BudgetStep budget_current_step() noexcept {
    if (g_budget <= 0) return mc::BudgetStep::kNone;
    maybe_sample();
    return static_cast<mc::BudgetStep>(g_step.load(std::memory_order_relaxed));
}

}  // namespace mc::httpd
