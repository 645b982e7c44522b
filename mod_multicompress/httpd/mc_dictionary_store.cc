// SPDX-License-Identifier: Apache-2.0
// The dictionaries' store and the child's cache of them (mc_dictionary_store.h).
#include "mc_dictionary_store.h"

#include <http_log.h>

#include <span>
#include <vector>

#include "mc_counters.h"
#include "mc_log.h"
#include "mc_socache.h"

APLOG_USE_MODULE(multicompress);

namespace mc::httpd {

mc::DictionaryCache& child_dictionaries() {
    static mc::DictionaryCache cache;  // per child: each process has its own copy
    return cache;
}

void note_dictionary_memory() {
    set_dictionary_memory(child_dictionaries().footprint());
}

// ---- The store ------------------------------------------------------------------------------

namespace {

// The bytes are stored once per dictionary, in chunks; a head per (dictionary, origin) says
// where it may be used (a dictionary offered on two hosts has two heads).
std::string chunk_key(const mc::DictionaryHash& h, std::uint32_t i) {
    return "mcd1-" + mc::hash_hex(h) + "-" + std::to_string(i);
}
std::string head_key(const mc::DictionaryHash& h, std::string_view origin) {
    const mc::DictionaryHash o = mc::sha256(std::as_bytes(std::span(origin)));
    return "mcd1-" + mc::hash_hex(h) + "@" + mc::hash_hex(o, 16);
}

}  // namespace

void store_dictionary(server_rec* s, const mc::DictionaryBytes& d, std::string_view origin,
                      apr_pool_t* pool) {
    const ServerConf* sc = usable_store(s);
    if (sc == nullptr) return;
    mc::DictionaryHead head;
    head.hash = d.hash;
    head.size = d.bytes.size();
    head.origin = origin;
    const apr_time_t expiry = apr_time_now() + mc::DictionaryCache::kStoreLifetime;
    // The chunks first: a head in the store means its chunks were written.
    for (std::uint32_t i = 0; i < head.chunks(); ++i) {
        const std::size_t off = std::size_t{i} * mc::kDictionaryChunk;
        std::string chunk = d.bytes.substr(off, mc::kDictionaryChunk);
        if (const apr_status_t rv = store_put(*sc, s, chunk_key(d.hash, i), chunk, expiry, pool);
            rv != APR_SUCCESS) {
            store_failed(s, rv, "storing a dictionary");
            return;
        }
    }
    std::string encoded = mc::encode_dictionary_head(head);
    if (const apr_status_t rv = store_put(*sc, s, head_key(d.hash, origin), encoded, expiry, pool);
        rv != APR_SUCCESS) {
        store_failed(s, rv, "storing a dictionary");
    }
}

// Reads the head of `h` for `origin` from the store and, unless this child has them already, the
// bytes, and checks them: the head for this hash and origin, every chunk, and the SHA-256 of
// the bytes (the store is shared and often unauthenticated).
std::shared_ptr<const mc::DictionaryBytes> fetch_dictionary(request_rec* r,
                                                            const mc::DictionaryHash& h,
                                                            std::string_view origin,
                                                            const SharedDictionary& have) {
    const ServerConf* sc = usable_store(r->server);
    if (sc == nullptr) return nullptr;
    std::vector<unsigned char> buf(mc::kDictionaryChunk + 1);
    unsigned int len = static_cast<unsigned int>(buf.size());
    const std::string hkey = head_key(h, origin);
    apr_status_t rv = store_get(*sc, r->server, hkey, buf.data(), &len, r->pool);
    if (APR_STATUS_IS_NOTFOUND(rv)) return nullptr;
    if (rv != APR_SUCCESS && rv != APR_ENOSPC && rv != APR_ENOMEM) {
        store_failed(r->server, rv, "a dictionary lookup");
        return nullptr;
    }
    const auto head = rv == APR_SUCCESS
                          ? mc::decode_dictionary_head(std::as_bytes(std::span(buf.data(), len)), h)
                          : std::nullopt;
    const auto reject = [&](const char* why) -> std::shared_ptr<const mc::DictionaryBytes> {
        ap_log_rerror(APLOG_MARK, APLOG_WARNING, 0, r,
                      MC_LOGNO(00270) "dictionary %s in the store is not usable (%s): removed",
                      mc::hash_hex(h).c_str(), why);
        count(mc::metrics::Event::kCacheRejected);
        store_remove(*sc, r->server, hkey, r->pool);
        return nullptr;
    };
    if (!head || head->origin != origin) return reject("a bad head");
    if (have) return have->bytes.size() == head->size ? have : reject("another size");
    auto d = std::make_shared<mc::DictionaryBytes>();
    d->hash = h;
    d->bytes.reserve(head->size);
    for (std::uint32_t i = 0; i < head->chunks(); ++i) {
        len = static_cast<unsigned int>(buf.size());
        rv = store_get(*sc, r->server, chunk_key(h, i), buf.data(), &len, r->pool);
        if (APR_STATUS_IS_NOTFOUND(rv)) return nullptr;  // evicted meanwhile: a miss
        if (rv != APR_SUCCESS || len > mc::kDictionaryChunk) return reject("a bad chunk");
        d->bytes.append(reinterpret_cast<const char*>(buf.data()), len);
        if (d->bytes.size() > head->size) return reject("more bytes than its head says");
    }
    if (d->bytes.size() != head->size) return reject("fewer bytes than its head says");
    if (mc::sha256(std::as_bytes(std::span(d->bytes))) != h) return reject("a hash mismatch");
    return d;
}

}  // namespace mc::httpd
