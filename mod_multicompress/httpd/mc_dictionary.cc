// SPDX-License-Identifier: Apache-2.0
// Compression dictionaries (RFC 9842): directives, the learning filter, the store and the
// child's cache of prepared dictionaries, and the dictionary a request may use.
#include "mc_dictionary.h"

#include <apr_strings.h>
#include <http_core.h>
#include <http_log.h>
#include <http_protocol.h>
#include <http_request.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "mc/accept_encoding.h"
#include "mc/coding.h"
#include "mc/config.h"
#include "mc/headers.h"
#include "mc_config.h"
#include "mc_counters.h"
#include "mc_dictionary_store.h"
#include "mc_log.h"
#include "mc_lookahead.h"
#include "mc_pool.h"
#include "mc_response.h"
#include "mc_request_state.h"
#include "mc_shared.h"
#include "mc_socache.h"
#include "mc_whole_body.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {
namespace {

// ---- Configuration -------------------------------------------------------------------------

// Every pattern the configuration offers (for Vary on the URLs they cover). Written while the
// configuration is read, read-only while requests run; .htaccess patterns only count for their
// own directory (dictionary_may_apply checks the request's own configuration too).
std::vector<std::string> g_patterns;
bool g_patterns_fresh = false;

apr_status_t forget_patterns(void*) noexcept {
    g_patterns.clear();
    g_patterns_fresh = false;
    return APR_SUCCESS;
}

void note_pattern(cmd_parms* cmd, const char* pattern) {
    if (ap_state_query(AP_SQ_MAIN_STATE) == AP_SQ_MS_RUN_MPM) return;  // .htaccess
    if (!g_patterns_fresh) {
        // A restart reads the configuration again: start over with it.
        g_patterns.clear();
        apr_pool_cleanup_register(cmd->pool, nullptr, forget_patterns, apr_pool_cleanup_null);
        g_patterns_fresh = true;
    }
    if (std::find(g_patterns.begin(), g_patterns.end(), pattern) == g_patterns.end()) {
        g_patterns.emplace_back(pattern);
    }
}

bool enabled(const mc::Config& cfg, mc::Coding c) {
    const auto codings = cfg.encodings();
    return std::find(codings.begin(), codings.end(), c) != codings.end();
}

// ---- Which dictionary a request may use -----------------------------------------------------

// A dictionary is used only where it was offered (RFC 9842 §2.1.1 keeps a dictionary to its
// origin): the virtual host as configured, never the Host header alone, so another site of the
// server (or one that answers any Host) neither feeds nor uses it.
std::string origin_of(const request_rec* r) {
    return server_identity(r);
}

// RFC 9842 §7 (security): browsers use no dictionary for cross-origin no-cors requests, whose
// responses are opaque to the page; neither does the server.
bool cross_origin_excluded(const request_rec* r) {
    const char* mode = apr_table_get(r->headers_in, "Sec-Fetch-Mode");
    const char* site = apr_table_get(r->headers_in, "Sec-Fetch-Site");
    if (mode == nullptr || site == nullptr || !mc::iequals(mc::trim_ows(mode), "no-cors"))
        return false;
    const std::string_view s = mc::trim_ows(site);
    return !mc::iequals(s, "same-origin") && !mc::iequals(s, "none");
}

const SharedDictionary* resolve(request_rec* r) {
    RequestState* st = request_state(r, true);
    if (st->dictionary_resolved) return static_cast<const SharedDictionary*>(st->dictionary);
    st->dictionary_resolved = true;
    if (r->main != nullptr) return nullptr;
    const mc::Config& cfg = dir_config(r);
    if (!enabled(cfg, mc::Coding::kDcz)) return nullptr;
    const char* named = apr_table_getm(r->pool, r->headers_in, "Available-Dictionary");
    const char* ae = apr_table_get(r->headers_in, "Accept-Encoding");
    if (named == nullptr || ae == nullptr ||
        mc::AcceptEncoding::parse(ae).explicit_weight(mc::Coding::kDcz) <= 0) {
        return nullptr;
    }
    const auto hash = mc::parse_available_dictionary(named);
    if (!hash) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "malformed Available-Dictionary ignored");
        count(mc::metrics::Event::kDictionaryUnknown);
        return nullptr;
    }
    if (cross_origin_excluded(r)) return nullptr;
    const std::string origin = origin_of(r);
    DictionaryCache& cache = child_dictionaries();
    SharedDictionary d = cache.find(*hash, origin);
    if (!d && !cache.missed_lately(*hash, origin, r->request_time)) {
        // Not offered on this origin by this child: the fleet's store may say it was.
        d = fetch_dictionary(r, *hash, origin, cache.find(*hash));
        if (d) {
            cache.put(d, origin);
        } else {
            cache.note_miss(*hash, origin, r->request_time);
        }
    }
    if (!d) {
        ap_log_rerror(APLOG_MARK, APLOG_TRACE1, 0, r, "dictionary %s not held for %s",
                      mc::hash_hex(*hash).c_str(), origin.c_str());
        count(mc::metrics::Event::kDictionaryUnknown);
        return nullptr;
    }
    const auto* held = pool_new<SharedDictionary>(r->pool, std::move(d));
    st->dictionary = held;
    return held;
}

// ---- Learning -------------------------------------------------------------------------------

struct LearnCtx {
    mc::Sha256 sha;
    std::string bytes;
    std::size_t max = 0;
    bool capturing = true;
};

ap_filter_rec_t* g_learn_filter = nullptr;

// A static file's version, for remembering its hash: only when the response is the file (a
// script's file is not its response; every distinct body of a handler is its own version).
std::string file_identity(request_rec* r) {
    if (!response_is_the_file(r)) return {};
    return apr_psprintf(r->pool, "%s|%" APR_OFF_T_FMT "|%" APR_TIME_T_FMT "|%lu", r->filename,
                        r->finfo.size, r->finfo.mtime, static_cast<unsigned long>(r->finfo.inode));
}

void learn(request_rec* r, const mc::DictionaryHash& hash, std::string&& bytes) {
    auto d = std::make_shared<mc::DictionaryBytes>();
    d->hash = hash;
    d->bytes = std::move(bytes);
    const std::string origin = origin_of(r);
    if (const std::string file = file_identity(r); !file.empty()) {
        child_dictionaries().remember_file(file, hash);
    }
    child_dictionaries().put(d, origin);
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
    if (!for_everyone(f)) return nullptr;
    const mc::DictionaryOffer offer{cfg.dictionary_match,
                                    cfg.dictionary_dests != nullptr ? cfg.dictionary_dests : "",
                                    cfg.dictionary_id != nullptr ? cfg.dictionary_id : ""};
    apr_table_setn(r->headers_out, "Use-As-Dictionary",
                   apr_pstrdup(r->pool, mc::format_use_as_dictionary(offer).c_str()));
    if (r->status != HTTP_OK || r->header_only) return nullptr;
    count(mc::metrics::Event::kDictionaryOffered);
    // Known already: nothing to capture.
    if (const std::string file = file_identity(r); !file.empty()) {
        if (const auto h = child_dictionaries().file_hash(file);
            h && child_dictionaries().stored_recently(*h, origin_of(r), apr_time_now())) {
            return nullptr;
        }
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
        apr_status_t rv = read_bucket(e, &data, &len, APR_NONBLOCK_READ);
        if (rv == APR_EAGAIN) {
            // A stall in a streamed body: pass what came before it on with a FLUSH (the
            // compressing filter flushes at a stall too), then wait for the rest.
            apr_bucket_brigade* rest = apr_brigade_split_ex(bb, e, nullptr);
            APR_BRIGADE_INSERT_TAIL(bb, apr_bucket_flush_create(f->c->bucket_alloc));
            rv = ap_pass_brigade(f->next, bb);
            apr_brigade_cleanup(bb);
            APR_BRIGADE_CONCAT(bb, rest);
            apr_brigade_destroy(rest);
            if (rv != APR_SUCCESS) return rv;
            e = APR_BRIGADE_FIRST(bb);
            rv = apr_bucket_read(e, &data, &len, APR_BLOCK_READ);
        }
        if (rv != APR_SUCCESS) return rv;
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

// ---- Directives -----------------------------------------------------------------------------

const char* set_use_as_dictionary(cmd_parms* cmd, void* mconfig, int argc,
                                  char* const argv[]) noexcept {
    try {
        auto& cfg = *static_cast<mc::Config*>(mconfig);
        const auto bad = [&](const char* why, const char* arg) {
            return apr_psprintf(cmd->pool, "%s: %s (got '%s')", cmd->cmd->name, why, arg);
        };
        if (argc < 1) return apr_psprintf(cmd->pool, "%s: needs a pattern or Off", cmd->cmd->name);
        if (argc == 1 && mc::iequals(argv[0], "Off")) {
            cfg.use_as_dictionary = mc::Toggle::kOff;
            cfg.dictionary_match = nullptr;
            return nullptr;
        }
        if (mc::Status st = mc::check_dictionary_pattern(argv[0]); !st.is_ok())
            return bad(st.reason(), argv[0]);
        std::string dests;
        const char* id = nullptr;
        for (int i = 1; i < argc; ++i) {
            const std::string_view a = argv[i];
            if (a.starts_with("dest=")) {
                const std::string_view d = a.substr(5);
                if (mc::Status st = mc::check_dictionary_dest(d); !st.is_ok())
                    return bad(st.reason(), argv[i]);
                if (!dests.empty()) dests += ' ';
                dests += d;
            } else if (a.starts_with("id=") && id == nullptr) {
                if (mc::Status st = mc::check_dictionary_id(a.substr(3)); !st.is_ok())
                    return bad(st.reason(), argv[i]);
                id = argv[i] + 3;
            } else {
                return bad("expects dest=DESTINATION or one id=ID after the pattern", argv[i]);
            }
        }
        cfg.use_as_dictionary = mc::Toggle::kOn;
        cfg.dictionary_match = apr_pstrdup(cmd->pool, argv[0]);
        cfg.dictionary_dests = apr_pstrdup(cmd->pool, dests.c_str());
        cfg.dictionary_id = id != nullptr ? apr_pstrdup(cmd->pool, id) : nullptr;
        note_pattern(cmd, argv[0]);
        note_cache_wanted(cmd);  // dictionaries live in the store
        return nullptr;
    } catch (...) {
        return apr_psprintf(cmd->pool, "%s: internal error while parsing", cmd->cmd->name);
    }
}

const char* set_dictionary_max_size(cmd_parms* cmd, void* mconfig, const char* arg) noexcept {
    try {
        auto& cfg = *static_cast<mc::Config*>(mconfig);
        if (!mc::parse_size(arg, 1, static_cast<std::int64_t>(mc::kMaxDictionarySize),
                            cfg.dictionary_max_size)
                 .is_ok()) {
            return apr_psprintf(cmd->pool, "%s: expects a size from 1 byte to 128M (got '%s')",
                                cmd->cmd->name, arg);
        }
        return nullptr;
    } catch (...) {
        return apr_psprintf(cmd->pool, "%s: internal error while parsing", cmd->cmd->name);
    }
}

// ---- Requests -------------------------------------------------------------------------------

bool dictionary_may_apply(const request_rec* r) {
    const char* path = r->parsed_uri.path != nullptr ? r->parsed_uri.path : r->uri;
    if (path == nullptr) return false;
    const mc::Config& cfg = dir_config(r);
    if (cfg.offers_dictionary() && mc::pattern_matches(cfg.dictionary_match, path)) return true;
    return std::any_of(g_patterns.begin(), g_patterns.end(),
                       [&](const std::string& p) { return mc::pattern_matches(p, path); });
}

const mc::DictionaryBytes* request_dictionary(request_rec* r) {
    const SharedDictionary* d = resolve(r);
    return d != nullptr ? d->get() : nullptr;
}

std::shared_ptr<const mc::DictionaryBytes> request_dictionary_shared(request_rec* r) {
    const SharedDictionary* d = resolve(r);
    return d != nullptr ? *d : nullptr;
}

std::string dcz_etag_tag(request_rec* r, mc::Coding coding) {
    if (coding != mc::Coding::kDcz) return {};
    const mc::DictionaryBytes* d = request_dictionary(r);
    return d != nullptr ? mc::hash_hex(d->hash).substr(0, mc::kDczEtagTagSize) : std::string();
}

std::shared_ptr<const mc::PreparedDictionary> prepared_dictionary(
    const std::shared_ptr<const mc::DictionaryBytes>& dict, int level) {
    return child_dictionaries().prepared(dict, level);
}

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
