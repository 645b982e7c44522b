// SPDX-License-Identifier: Apache-2.0
// MultiCompressCPUBudget in the server: live compression's share of the machine, sampled from
// the shared counters, and the step new responses take (mc::BudgetController).
#pragma once

#include <httpd.h>

#include "mc/budget.h"
#include "mc/config.h"

namespace mc::httpd {

/// post_config hook: the budget of the main server (the share the controller keeps to).
int budget_post_config(apr_pool_t* pconf, apr_pool_t* plog, apr_pool_t* ptemp,
                       server_rec* s) noexcept;
/// The step for a new live response under `cfg` (kNone when its budget is Off). Samples the
/// shared counters at most every 250 ms per child, without a lock on the request path.
mc::BudgetStep budget_step(const mc::Config& cfg) noexcept;
/// The last sampled share (0..1) and step, for the metrics page.
double budget_share() noexcept;
mc::BudgetStep budget_current_step() noexcept;

}  // namespace mc::httpd
