// SPDX-License-Identifier: Apache-2.0
// The cache's upgrade worker: reads a file through APR, compresses it at the cache level and
// stores it, off the request path, one thread per child.
#include "mc_cache_worker.h"

#include <apr_file_info.h>
#include <apr_file_io.h>
#include <http_log.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <span>
#include <thread>
#include <utility>

#include "mc/alloc.h"
#include "mc/encoder.h"
#include "mc/sink.h"
#include "mc_counters.h"
#include "mc_log.h"
#include "mc_pool.h"
#include "mc_cache_entries.h"
#include "mc_socache.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

constexpr apr_int32_t kIdentityWanted = APR_FINFO_SIZE | APR_FINFO_MTIME | APR_FINFO_INODE;

// Whether `info` (from apr_stat or apr_file_info_get) is the version of the file `job` names.
bool same_file(apr_status_t rv, const apr_finfo_t& info, const UpgradeJob& job) {
    return (rv == APR_SUCCESS || rv == APR_INCOMPLETE) &&
           (info.valid & kIdentityWanted) == kIdentityWanted && info.size == job.file.size &&
           info.mtime == job.file.mtime && info.inode == job.file.inode;
}

// Reads the whole file into `body` (job.file.size bytes) and checks that the open file is still
// the job's version. The file and its compressed form live in mc::mem_alloc memory, not
// malloc's (see mc::MemAllocator): a multi-MB block freed through malloc raises its thresholds.
bool read_file(const UpgradeJob& job, apr_pool_t* pool, mc::MemString& body) {
    apr_file_t* f = nullptr;
    if (apr_file_open(&f, job.path.c_str(), APR_FOPEN_READ | APR_FOPEN_BINARY, APR_FPROT_OS_DEFAULT,
                      pool) != APR_SUCCESS) {
        return false;
    }
    body.assign(static_cast<std::size_t>(job.file.size), '\0');
    apr_size_t got = 0;
    bool ok =
        body.empty() || (apr_file_read_full(f, body.data(), body.size(), &got) == APR_SUCCESS &&
                         got == body.size());
    if (ok) {  // nothing after the bytes the job expects: the file did not grow
        char extra = 0;
        apr_size_t n = 1;
        ok = apr_file_read(f, &extra, &n) == APR_EOF;
    }
    if (ok) {  // the bytes read are of the job's version, not of a file written meanwhile
        apr_finfo_t info{};
        ok = same_file(apr_file_info_get(&info, kIdentityWanted, f), info, job);
    }
    apr_file_close(f);
    return ok;
}

void run(const UpgradeJob& job, apr_pool_t* pool, const std::atomic<bool>& cancel) {
    // The file must still be the one the key names; an edited file gets a new key anyway.
    apr_finfo_t info{};
    if (!same_file(apr_stat(&info, job.path.c_str(), kIdentityWanted, pool), info, job)) return;
    mc::MemString body;
    if (!read_file(job, pool, body)) return;
    mc::EncoderParams p;
    p.coding = job.coding;
    p.level = job.level;
    std::shared_ptr<const mc::PreparedDictionary> dictionary;
    if (job.coding == mc::Coding::kDcz) {
        if (!job.dictionary) return;
        // Prepared for this job only: a strong level's tables for a large dictionary run to tens
        // of MB, more than the child should keep for the few responses that miss the cache.
        auto made = mc::PreparedDictionary::make(job.dictionary, job.level);
        if (!made.is_ok()) return;
        dictionary = std::move(made).value();
        p.dictionary = dictionary.get();
    }
    mc::MemStringSink sink(64 * 1024);
    const auto done =
        mc::compress_all(p, std::as_bytes(std::span(body.data(), body.size())), sink, &cancel);
    if (!done.is_ok() || static_cast<std::int64_t>(sink.data().size()) > job.max_entry) return;
    // A stronger level does not always make fewer bytes (zlib 9 against libdeflate 6 on some
    // text): every later hit gets the smaller of the two.
    if (cache_keep_stored(job.server, job.key, job.coding, job.file,
                          max_window_for(job.coding, job.dictionary.get()), job.max_entry,
                          job.level, sink.data().size(), pool)) {
        ap_log_error(APLOG_MARK, APLOG_TRACE1, 0, job.server,
                     "cache: %s kept its stored %s copy: level %d is not smaller", job.path.c_str(),
                     mc::coding_token(job.coding).data(), job.level);
        return;
    }
    if (!cache_put(job.server, job.key, job.coding, job.file, job.level,
                   {sink.data().data(), sink.data().size()}, pool)) {
        return;
    }
    count(mc::metrics::Event::kCacheUpgrade);
    ap_log_error(APLOG_MARK, APLOG_TRACE1, 0, job.server, "cache: %s upgraded to %s level %d",
                 job.path.c_str(), mc::coding_token(job.coding).data(), job.level);
}

class Upgrader {
public:
    static constexpr std::size_t kMaxQueue = 64;

    Upgrader() : thread_([this] { loop(); }) {}
    ~Upgrader() {
        {
            const std::lock_guard<std::mutex> lock(mu_);
            stop_ = true;
        }
        cancel_.store(true);  // a running upgrade stops within one step: the child exits now
        cv_.notify_one();
        thread_.join();
    }
    Upgrader(const Upgrader&) = delete;
    Upgrader& operator=(const Upgrader&) = delete;

    void submit(UpgradeJob job) {
        {
            const std::lock_guard<std::mutex> lock(mu_);
            if (queue_.size() >= kMaxQueue) return;  // busy: a later request asks again
            if (job.key == running_) return;
            for (const UpgradeJob& queued : queue_) {
                if (queued.key == job.key) return;
            }
            queue_.push_back(std::move(job));
        }
        cv_.notify_one();
    }

private:
    void loop() noexcept {
        apr_pool_t* pool = nullptr;
        if (apr_pool_create(&pool, nullptr) != APR_SUCCESS) return;
        for (;;) {
            UpgradeJob job;
            {
                std::unique_lock<std::mutex> lock(mu_);
                cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
                if (stop_) break;
                job = std::move(queue_.front());
                queue_.pop_front();
                running_ = job.key;
            }
            try {
                run(job, pool, cancel_);
            } catch (...) {
                ap_log_error(APLOG_MARK, APLOG_ERR, 0, job.server,
                             MC_LOGNO(00041) "cache upgrade failed");
            }
            apr_pool_clear(pool);
            const std::lock_guard<std::mutex> lock(mu_);
            running_.clear();
        }
        apr_pool_destroy(pool);
    }

    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<UpgradeJob> queue_;
    std::string running_;  ///< key of the job being compressed
    bool stop_ = false;
    std::atomic<bool> cancel_{false};  ///< set at exit: the running compression stops
    std::thread thread_;               // last: starts after the members it uses
};

// One per child process, set in child_init before any request thread runs.
Upgrader* g_upgrader = nullptr;

}  // namespace

void cache_worker_child_init(apr_pool_t* pchild, server_rec* s) noexcept {
    try {
        if (!cache_wanted()) return;
        g_upgrader = pool_new<Upgrader>(pchild);
    } catch (...) {
        ap_log_error(APLOG_MARK, APLOG_ERR, 0, s,
                     MC_LOGNO(00044) "cache: cannot start the upgrade worker");
    }
}

void submit_upgrade(UpgradeJob job) {
    if (g_upgrader != nullptr) g_upgrader->submit(std::move(job));
}

}  // namespace mc::httpd
