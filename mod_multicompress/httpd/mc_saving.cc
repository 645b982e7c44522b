// SPDX-License-Identifier: Apache-2.0
// MultiCompressMinSaving in the filter: the memory of savings, the quick probe of a body's first
// block, the identity decision with its reason.
#include "mc_saving.h"

#include <apr_strings.h>
#include <http_log.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "mc/saving.h"
#include "mc_counters.h"
#include "mc_keys.h"
#include "mc_log.h"
#include "mc_brigade.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

using Clock = mc::SavingMemory::Clock;

// A file version cannot change under its key (path, device, inode, size, mtime); a dynamic
// response's body can, so it is measured again sooner.
constexpr auto kFileVersionTtl = std::chrono::hours(1);
constexpr auto kDynamicTtl = std::chrono::minutes(1);

mc::SavingMemory& memory() {
    static mc::SavingMemory m;  // per child: each process has its own copy
    return m;
}

// Probes shared by a child's threads, so a zstd context is not made per response.
class ProbePool {
public:
    std::unique_ptr<mc::SavingProbe> take() {
        const std::lock_guard<std::mutex> lock(mu_);
        if (free_.empty()) return std::make_unique<mc::SavingProbe>();
        auto p = std::move(free_.back());
        free_.pop_back();
        return p;
    }
    void give_back(std::unique_ptr<mc::SavingProbe> p) {
        const std::lock_guard<std::mutex> lock(mu_);
        if (free_.size() < kKeep) free_.push_back(std::move(p));
    }

private:
    static constexpr std::size_t kKeep = 4;
    std::mutex mu_;
    std::vector<std::unique_ptr<mc::SavingProbe>> free_;
};

ProbePool& probes() {
    static ProbePool pool;
    return pool;
}

// httpd's default handler sends r->filename (as mc_static.cc decides it).
bool is_file_version(const request_rec* r) {
    if (r->finfo.filetype != APR_REG || (r->path_info != nullptr && *r->path_info != '\0'))
        return false;
    const char* h = r->handler;
    return h == nullptr || std::strcmp(h, "default-handler") == 0 ||
           (r->content_type != nullptr && std::strcmp(h, r->content_type) == 0);
}

// What the memory knows a body by, and for how long.
struct Key {
    std::string text;
    Clock::duration ttl{};
};

Key key_of(const request_rec* r) {
    Key key;
    if (is_file_version(r)) {
        key.ttl = kFileVersionTtl;
        const std::string_view path = r->filename;
        // The numbers as they are in memory (fixed width after the path): built on every hit.
        key.text.reserve(2 + path.size() + sizeof r->finfo.device + sizeof r->finfo.inode +
                         sizeof r->finfo.size + sizeof r->finfo.mtime);
        key.text.append("f ").append(path);
        append_raw(key.text, r->finfo.device);
        append_raw(key.text, r->finfo.inode);
        append_raw(key.text, r->finfo.size);
        append_raw(key.text, r->finfo.mtime);
        return key;
    }
    // Not the type alone: one response that does not shrink must not stop the compression of
    // every response of its type.
    key.ttl = kDynamicTtl;
    key.text = "d ";
    key.text += r->server->server_hostname != nullptr ? r->server->server_hostname : "";
    append_decimal(key.text, ':', r->server->port);
    key.text += ' ';
    key.text += r->uri != nullptr ? r->uri : "";
    key.text += ' ';
    key.text += r->content_type != nullptr ? r->content_type : "";
    return key;
}

// Up to kSavingProbeBytes of the body's start from what `bb` holds: the bytes, pointing into the
// first bucket when it holds enough, else copied into `copy`. The first read may wait for a pipe
// or socket (a CGI, a backend) as the brigade loop would before it had anything to send; the
// others do not wait. A HEAD of a stream is not read at all (its body is not sent).
std::string_view first_block(const request_rec* r, apr_bucket_brigade* bb, std::string& copy) {
    apr_read_type_e block = r->header_only ? APR_NONBLOCK_READ : APR_BLOCK_READ;
    for (apr_bucket* e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb);
         e = APR_BUCKET_NEXT(e)) {
        if (APR_BUCKET_IS_METADATA(e)) {
            if (APR_BUCKET_IS_EOS(e) || APR_BUCKET_IS_FLUSH(e)) break;
            continue;
        }
        if (is_large_file(e)) {  // copied, not mapped (mc_brigade.h)
            const std::size_t have = copy.size();
            copy.resize(mc::kSavingProbeBytes);
            const apr_size_t want = mc::kSavingProbeBytes - have;
            if (read_file_into(e, 0, copy.data() + have, want) != APR_SUCCESS) copy.resize(have);
            break;
        }
        const char* data = nullptr;
        apr_size_t len = 0;
        if (read_bucket(e, &data, &len, block) != APR_SUCCESS) break;
        block = APR_NONBLOCK_READ;
        if (copy.empty() && len >= mc::kSavingProbeBytes) return {data, mc::kSavingProbeBytes};
        copy.append(data, std::min<std::size_t>(len, mc::kSavingProbeBytes - copy.size()));
        if (copy.size() >= mc::kSavingProbeBytes) break;
    }
    return copy;
}

void to_identity(request_rec* r, mc::Decision& d, int saving, int min_saving, const char* how) {
    d.coding = mc::Coding::kIdentity;
    d.why = mc::metrics::Why::kIncompressible;
    d.budget = mc::BudgetStep::kNone;
    d.reason =
        apr_psprintf(r->pool, "the body saves %d%% %s, less than MultiCompressMinSaving %d%%",
                     saving, how, min_saving);
}

}  // namespace

void check_saving(request_rec* r, apr_bucket_brigade* bb, const mc::Config& cfg, mc::Decision& d) {
    const int min_saving = cfg.min_saving_value();
    // dcz's saving comes from the dictionary the client holds: a probe without it says nothing.
    if (min_saving == 0 || d.coding == mc::Coding::kIdentity || d.coding == mc::Coding::kDcz)
        return;
    const Key key = key_of(r);
    if (const auto saving = memory().recall(key.text, Clock::now())) {
        if (!mc::worth_compressing(*saving, min_saving)) {
            to_identity(r, d, *saving, min_saving, "(remembered)");
        }
        return;
    }
    std::string copy;
    const std::string_view sample = first_block(r, bb, copy);
    if (sample.size() < mc::kSavingMinSample) return;  // too little to tell: compress
    std::unique_ptr<mc::SavingProbe> probe = probes().take();
    const auto saving =
        probe->saving({reinterpret_cast<const std::byte*>(sample.data()), sample.size()});
    probes().give_back(std::move(probe));
    count(mc::metrics::Event::kSavingProbe);
    if (!saving.is_ok()) return;  // no estimate: compress as before
    memory().remember(key.text, saving.value(), Clock::now() + key.ttl);
    if (!mc::worth_compressing(saving.value(), min_saving)) {
        to_identity(r, d, saving.value(), min_saving,
                    apr_psprintf(r->pool, "in its first %" APR_SIZE_T_FMT " bytes (zstd-1 probe)",
                                 sample.size()));
    }
}

void remember_saving(request_rec* r, mc::Coding coding, std::uint64_t in, std::uint64_t out) {
    if (coding == mc::Coding::kDcz || in < mc::kSavingMinSample) return;
    const Key key = key_of(r);
    memory().remember(key.text, mc::saving_percent(in, out), Clock::now() + key.ttl);
}

bool remembered_no_saving(request_rec* r, const mc::Config& cfg) {
    const int min_saving = cfg.min_saving_value();
    if (min_saving == 0) return false;
    const auto saving = memory().recall(key_of(r).text, Clock::now());
    return saving && !mc::worth_compressing(*saving, min_saving);
}

}  // namespace mc::httpd
