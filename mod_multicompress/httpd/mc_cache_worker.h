// SPDX-License-Identifier: Apache-2.0
// The cache's upgrade worker: one thread per child that makes the strong copy of an entry.
#pragma once

#include <httpd.h>

#include <cstdint>
#include <memory>
#include <string>

#include "mc/coding.h"
#include "mc/dictionary.h"
#include "mc_cache_entries.h"

namespace mc::httpd {

/// One file to compress at the cache level and store under `key`.
struct UpgradeJob {
    std::string path;
    std::string key;
    mc::Coding coding = mc::Coding::kGzip;
    int level = 0;
    std::int64_t max_entry = 0;
    FileIdentity file;  ///< the version the key names; another one is not compressed
    server_rec* server = nullptr;
    /// dcz: the dictionary the body is compressed against.
    std::shared_ptr<const mc::DictionaryBytes> dictionary;
};

/// Starts the child's worker when the cache is on (it stops with `pchild`).
void cache_worker_child_init(apr_pool_t* pchild, server_rec* s) noexcept;
/// Queues `job` unless the worker is busy or has it already; a no-op without a worker.
void submit_upgrade(UpgradeJob job);

}  // namespace mc::httpd
