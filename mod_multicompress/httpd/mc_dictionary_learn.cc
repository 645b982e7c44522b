// SPDX-License-Identifier: Apache-2.0
// The learning filter: Use-As-Dictionary on the responses offered, their bytes kept by hash.
#include "mc_dictionary_learn.h"

#include <apr_strings.h>
#include <http_log.h>
#include <http_protocol.h>
#include <util_filter.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "mc/dictionary.h"
#include "mc/hashed_name.h"
#include "mc/headers.h"
#include "mc/last_parse.h"
#include "mc/view_hash.h"
#include "mc_brigade.h"
#include "mc_config.h"
#include "mc_counters.h"
#include "mc_dictionary_lookup.h"
#include "mc_dictionary_store.h"
#include "mc_log.h"
#include "mc_lookahead.h"
#include "mc_keys.h"
#include "mc_pool.h"
#include "mc_request_state.h"
#include "mc_response.h"
#include "mc_shared.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

struct LearnCtx {
    mc::Sha256 sha;
    std::string bytes;
    std::size_t max = 0;
    bool capturing = true;
};

// Set once in register_hooks, read-only afterwards.
ap_filter_rec_t* g_learn_filter = nullptr;

// The Use-As-Dictionary value of an offer, by what it is made of (for `auto`, the URL's path):
// parsed and formatted once per child, not on every response of a bundle. Bounded: when full it
// starts over.
class OfferValues {
public:
    /// The value for `cfg` at `path`, in `pool`; nullptr when `auto` finds no content hash.
    const char* value(const mc::Config& cfg, std::string_view path, apr_pool_t* pool) {
        if (cfg.dictionary_match == nullptr) return nullptr;
        const Parts parts{cfg.dictionary_auto(), cfg.dictionary_match,
                          cfg.dictionary_dests != nullptr ? cfg.dictionary_dests : "",
                          cfg.dictionary_id != nullptr ? cfg.dictionary_id : ""};
        const auto& [is_auto, match, dests, id] = parts;
        // '\0' cannot occur in a path or a directive's argument: the parts stay apart. Made in
        // r->pool (looked up on every response of a bundle: no malloc).
        const std::string_view key =
            is_auto ? joined(pool, {"A", dests, std::string_view("\0", 1), path})
                    : joined(pool, {"M", match, std::string_view("\0", 1), dests,
                                    std::string_view("\0", 1), id});
        // A bundle's responses come one after another: each thread keeps its last value too,
        // without the child's lock.
        thread_local mc::LastParse<kMaxThreadKey, ThreadValue> t_last;
        const char* fresh = nullptr;
        bool asked = false;
        const ThreadValue& kept = t_last.of(key, [&](std::string_view k) {
            fresh = look_up(parts, path, k, pool);
            asked = true;
            return ThreadValue::of(fresh);
        });
        if (asked) return fresh;
        if (kept.fits)
            return kept.len == 0 ? nullptr : apr_pstrmemdup(pool, kept.text.data(), kept.len);
        return look_up(parts, path, key, pool);
    }

private:
    // What an offer is made of (the directive's arguments; for `auto`, also the URL's path).
    struct Parts {
        bool is_auto;
        std::string_view match, dests, id;
    };

    // A value as a thread keeps it: plain arrays (see mc/last_parse.h); a longer one is looked
    // up in the child's map every time.
    struct ThreadValue {
        std::array<char, 256> text{};
        std::size_t len = 0;  ///< 0: not offered
        bool fits = false;
        static ThreadValue of(const char* v) {
            ThreadValue t;
            const std::string_view s = v != nullptr ? v : "";
            t.fits = s.size() <= t.text.size();
            if (t.fits) t.len = s.copy(t.text.data(), t.text.size());
            return t;
        }
    };
    static constexpr std::size_t kMaxThreadKey = 512;

    // The child's value for `key` (made of `parts` and `path`), formatted on its first use.
    const char* look_up(const Parts& parts, std::string_view path, std::string_view key,
                        apr_pool_t* pool) {
        const auto& [is_auto, match, dests, id] = parts;
        {
            const std::lock_guard<std::mutex> lock(mu_);
            if (const auto it = values_.find(key); it != values_.end())
                return copy(it->second, pool);
        }
        std::string formatted;
        if (is_auto) {
            // The family of a content-hashed name (as the URL is sent): app.3f9a1c2b.js offers
            // itself to /dir/app.*.js, its id the hash. A name without a hash is not offered.
            if (const auto name = mc::parse_hashed_name(path)) {
                const std::string family = name->match_pattern();
                formatted = mc::format_use_as_dictionary({family, dests, name->id()});
            }
        } else {
            formatted = mc::format_use_as_dictionary({match, dests, id});
        }
        if (key.size() > kMaxKey) return copy(formatted, pool);  // a long URL: not kept
        const std::lock_guard<std::mutex> lock(mu_);
        if (values_.size() >= kMax) values_.clear();
        return copy(values_.emplace(std::string(key), std::move(formatted)).first->second, pool);
    }

    static std::string_view joined(apr_pool_t* pool,
                                   std::initializer_list<std::string_view> parts) {
        std::size_t n = 0;
        for (const std::string_view p : parts) n += p.size();
        auto* out = static_cast<char*>(apr_palloc(pool, n));
        char* at = out;
        for (const std::string_view p : parts) at = std::copy(p.begin(), p.end(), at);
        return {out, n};
    }

    static const char* copy(const std::string& v, apr_pool_t* pool) {
        return v.empty() ? nullptr : apr_pstrmemdup(pool, v.data(), v.size());
    }
    static constexpr std::size_t kMax = 1024;
    static constexpr std::size_t kMaxKey = 1024;  // at most about 2 MB held
    std::mutex mu_;
    std::unordered_map<std::string, std::string, mc::ViewHash, std::equal_to<>>
        values_;  ///< "": not offered
};

OfferValues& offer_values() {
    static OfferValues values;  // per child: each process has its own copy
    return values;
}

// A static file's version, for remembering its hash: only when the response is the file (a
// script's file is not its response; every distinct body of a handler is its own version).
// In r->pool; empty when the response is not the file.
std::string_view file_identity(request_rec* r) {
    // A sidecar or cache hit is the file compressed: the handler checked it before sending.
    if (!sent_encoded(r) && !response_is_the_file(r)) return {};
    // The path, then size, mtime and inode as they are in memory (fixed width, so unambiguous):
    // looked up on every response of the file, and kept only in this child's memory.
    const std::size_t path = std::strlen(r->filename);
    const std::size_t n =
        path + sizeof r->finfo.size + sizeof r->finfo.mtime + sizeof r->finfo.inode;
    auto* id = static_cast<char*>(apr_palloc(r->pool, n));
    char* out = std::copy_n(r->filename, path, id);
    out = put_raw(out, r->finfo.size);
    out = put_raw(out, r->finfo.mtime);
    put_raw(out, r->finfo.inode);
    return {id, n};
}

void learn(request_rec* r, const mc::DictionaryHash& hash, std::string&& bytes) {
    auto d = std::make_shared<mc::DictionaryBytes>();
    d->hash = hash;
    d->bytes = std::move(bytes);
    const std::string_view origin = dictionary_origin(r);
    if (const std::string_view file = file_identity(r); !file.empty()) {
        child_dictionaries().remember_file(file, hash);
    }
    child_dictionaries().put(d, origin);
    note_dictionary_memory();
    if (!child_dictionaries().claim_store(hash, origin, apr_time_now())) return;
    store_dictionary(r->server, *d, origin, r->pool);
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r,
                  "dictionary %s learned (%" APR_SIZE_T_FMT " bytes)", mc::hash_hex(hash).c_str(),
                  d->bytes.size());
}

// A response sent from a sidecar or cache entry is FILE compressed: learn from FILE itself.
bool learn_from_file(request_rec* r, std::size_t max) {
    if (r->finfo.filetype != APR_REG || static_cast<std::size_t>(r->finfo.size) > max) return false;
    apr_file_t* fd = nullptr;
    if (apr_file_open(&fd, r->filename, APR_READ | APR_BINARY, 0, r->pool) != APR_SUCCESS)
        return false;
    std::string bytes(static_cast<std::size_t>(r->finfo.size), '\0');
    apr_size_t got = 0;
    const apr_status_t rv = apr_file_read_full(fd, bytes.data(), bytes.size(), &got);
    apr_file_close(fd);
    if (rv != APR_SUCCESS || got != bytes.size()) return false;
    learn(r, mc::sha256(std::as_bytes(std::span(bytes))), std::move(bytes));
    return true;
}

// RFC 9842 §9: a dictionary must not reveal private content, since any client can test a guess
// of it by naming its hash. Not one marked private or no-store, or that sets a cookie (also as
// mod_headers will leave it); and one answering a request with credentials only when it says it
// is for everyone (RFC 9111 §3.5: Cache-Control: public lets a shared cache keep it).
bool for_everyone(ap_filter_t* f) {
    request_rec* r = f->r;
    const LateHeaders h = headers_when_sent(f);
    const auto says = [&](const char* token) {
        return table_has_token(h.out, "Cache-Control", token) ||
               table_has_token(h.err, "Cache-Control", token);
    };
    const char* why = nullptr;
    if (says("private") || says("no-store")) {
        why = "Cache-Control: private or no-store";
    } else if (apr_table_get(h.out, "Set-Cookie") != nullptr ||
               apr_table_get(h.err, "Set-Cookie") != nullptr) {
        why = "a Set-Cookie";
    } else if ((apr_table_get(r->headers_in, "Cookie") != nullptr ||
                apr_table_get(r->headers_in, "Authorization") != nullptr || r->user != nullptr) &&
               !says("public")) {
        why = "a request with credentials (no Cache-Control: public)";
    }
    if (why == nullptr) return true;
    ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "not offered as a dictionary: %s", why);
    return false;
}

// First call: the header, and whether to capture the body.
LearnCtx* start_learning(ap_filter_t* f, apr_bucket_brigade* bb) {
    request_rec* r = f->r;
    const mc::Config& cfg = dir_config(r);
    if (r->status != HTTP_OK && r->status != HTTP_NOT_MODIFIED) return nullptr;
    const auto max = static_cast<std::size_t>(cfg.dictionary_max_size_value());
    bool plain = false;
    const apr_off_t whole = whole_body_length(bb, plain);
    const apr_off_t length = whole >= 0 ? whole : content_length_of(r);
    const bool encoded = !mc::is_identity_encoding(content_encoding_of(r));
    const char* source = apr_table_get(r->subprocess_env, "MULTICOMPRESS_SOURCE");
    const bool ours = source != nullptr && (std::string_view(source) == "sidecar" ||
                                            std::string_view(source) == "cache");
    // Larger responses are not offered (docs/contract.md); an encoded one only when it is FILE
    // compressed by us (a sidecar or cache hit), whose bytes we can read.
    if (r->status == HTTP_OK && length >= 0 && static_cast<std::size_t>(length) > max && !encoded) {
        return nullptr;
    }
    if (encoded &&
        (!ours || r->finfo.filetype != APR_REG || static_cast<std::size_t>(r->finfo.size) > max)) {
        return nullptr;
    }
    const char* path = r->parsed_uri.path != nullptr ? r->parsed_uri.path : r->uri;
    const char* offer = offer_values().value(cfg, path != nullptr ? path : "", r->pool);
    if (offer == nullptr) return nullptr;
    if (!for_everyone(f)) return nullptr;
    apr_table_setn(r->headers_out, "Use-As-Dictionary", offer);
    if (r->status != HTTP_OK || r->header_only) return nullptr;
    count(mc::metrics::Event::kDictionaryOffered);
    // Known already: nothing to capture.
    if (const std::string_view file = file_identity(r);
        !file.empty() &&
        child_dictionaries().file_stored_recently(file, dictionary_origin(r), apr_time_now())) {
        return nullptr;
    }
    if (encoded) {
        learn_from_file(r, max);
        return nullptr;
    }
    auto* ctx = pool_new<LearnCtx>(r->pool);
    ctx->max = max;
    if (length > 0) ctx->bytes.reserve(static_cast<std::size_t>(length));
    return ctx;
}

// A stall in a streamed body: pass what came before `e` on with a FLUSH (the compressing filter
// flushes at a stall too), and keep `e` and what follows it in `bb`.
apr_status_t pass_before(ap_filter_t* f, apr_bucket_brigade* bb, apr_bucket* e) {
    apr_bucket_brigade* rest = apr_brigade_split_ex(bb, e, nullptr);
    APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_flush_create(f->c->bucket_alloc));
    const apr_status_t rv = ap_pass_brigade(f->next, bb);
    apr_brigade_cleanup(bb);
    APR_BRIGADE_CONCAT(bb, rest);
    apr_brigade_destroy(rest);
    return rv;
}

apr_status_t capture(ap_filter_t* f, LearnCtx* ctx, apr_bucket_brigade* bb) {
    for (apr_bucket* e = APR_BRIGADE_FIRST(bb); e != APR_BRIGADE_SENTINEL(bb);
         e = APR_BUCKET_NEXT(e)) {
        if (APR_BUCKET_IS_EOS(e)) {
            // Only a whole body: not one cut short by the client or by a backend's error.
            if (ctx->capturing && f->c->aborted == 0) {
                learn(f->r, ctx->sha.finish(), std::move(ctx->bytes));
            }
            ctx->capturing = false;
            break;
        }
        if (AP_BUCKET_IS_ERROR(e)) ctx->capturing = false;
        if (APR_BUCKET_IS_METADATA(e) || !ctx->capturing) continue;
        const char* data = nullptr;
        apr_size_t len = 0;
        if (const apr_status_t rv =
                read_or_flush(e, &data, &len, [&] { return pass_before(f, bb, e); });
            rv != APR_SUCCESS) {
            return rv;
        }
        if (ctx->bytes.size() + len > ctx->max) {
            ctx->capturing = false;  // too large to keep: offered, but not held (a miss later)
            std::string().swap(ctx->bytes);
            continue;
        }
        ctx->bytes.append(data, len);
        ctx->sha.update(std::as_bytes(std::span(data, len)));
    }
    return ap_pass_brigade(f->next, bb);
}

apr_status_t learn_filter(ap_filter_t* f, apr_bucket_brigade* bb) noexcept {
    try {
        if (APR_BRIGADE_EMPTY(bb)) return APR_SUCCESS;
        auto* ctx = static_cast<LearnCtx*>(f->ctx);
        if (ctx == nullptr) {
            ctx = start_learning(f, bb);
            if (ctx == nullptr) {
                ap_remove_output_filter(f);
                return ap_pass_brigade(f->next, bb);
            }
            f->ctx = ctx;
        }
        return capture(f, ctx, bb);
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, f->r, MC_LOGNO(00271) "dictionary filter failed");
    }
    return APR_EGENERAL;
}

}  // namespace

void insert_dictionary_filter(request_rec* r) noexcept {
    try {
        if (r->main != nullptr || !dir_config(r).offers_dictionary()) return;
        if (r->method_number != M_GET) return;  // HEAD is M_GET too
        ap_add_output_filter_handle(g_learn_filter, nullptr, r, r->connection);
    } catch (...) {
        ap_log_rerror(APLOG_MARK, APLOG_ERR, 0, r, MC_LOGNO(00272) "insert_filter failed");
    }
}

void register_dictionary_filter() {
    // Before every compressing filter (AP_FTYPE_CONTENT_SET) and after content filters such as
    // INCLUDES (AP_FTYPE_RESOURCE): it sees the body the client will decode to.
    g_learn_filter =
        ap_register_output_filter("MULTICOMPRESS_DICTIONARY", learn_filter, nullptr,
                                  static_cast<ap_filter_type>(AP_FTYPE_CONTENT_SET - 1));
}

}  // namespace mc::httpd
