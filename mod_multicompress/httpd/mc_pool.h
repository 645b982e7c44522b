// SPDX-License-Identifier: Apache-2.0
// C++ objects owned by APR pools: the destructor runs as a pool cleanup (pagespeed's
// apache_cleanup<T>), so an aborted request still frees what its filter held.
#pragma once

#include <apr_pools.h>

#include <new>
#include <utility>

namespace mc::httpd {

template <class T>
apr_status_t pool_destroy(void* obj) noexcept {
    static_cast<T*>(obj)->~T();
    return APR_SUCCESS;
}

/// Constructs a T in `pool` and registers its destructor as a cleanup of that pool.
template <class T, class... A>
T* pool_new(apr_pool_t* pool, A&&... args) {
    void* mem = apr_palloc(pool, sizeof(T));
    T* obj = new (mem) T(std::forward<A>(args)...);
    apr_pool_cleanup_register(pool, obj, &pool_destroy<T>, apr_pool_cleanup_null);
    return obj;
}

/// Destroys a pool_new'ed object now (runs and unregisters its cleanup).
template <class T>
void pool_delete(apr_pool_t* pool, T* obj) {
    apr_pool_cleanup_run(pool, obj, &pool_destroy<T>);
}

}  // namespace mc::httpd
