// SPDX-License-Identifier: Apache-2.0
// dcz bodies made off the request path, and delta sidecar names.
#include "mc/dcz_delta.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getCParams
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include "mc/oneshot.h"
#include "mc/params.h"

namespace mc {

namespace {

bool is_lower_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

struct CCtxDeleter {
    void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};

int highbit(std::uint64_t v) {
    int h = 0;
    while (h < 63 && (std::uint64_t{2} << h) <= v) ++h;
    return h;
}

// `zstd --patch-from=DICT FILE` at `level` (zstd 1.5.4 programs/fileio.c,
// FIO_adjustParamsForPatchFromMode and FIO_createCResources): the dictionary as a prefix, the
// level's parameters for the file, windowLog = highbit(file size) + 1, long-distance matching
// when that is above the cycle log (chainLog, one less for the binary-tree strategies). Its
// window is kept within what a dcz client accepts; no checksum (the module sends none).
Result<std::size_t> patch_from_frame(const PreparedDictionary& d, std::span<const std::byte> in,
                                     std::span<std::byte> out) {
    const std::unique_ptr<ZSTD_CCtx, CCtxDeleter> cctx(ZSTD_createCCtx());
    if (!cctx) return Status{Code::kOutOfMemory, "zstd: cannot create context"};
    const int file_window = std::max(highbit(in.size()) + 1, ZSTD_WINDOWLOG_MIN);
    const ZSTD_compressionParameters cp = ZSTD_getCParams(d.level(), in.size(), d.size());
    const int cycle_log = static_cast<int>(cp.chainLog) - (cp.strategy >= ZSTD_btlazy2 ? 1 : 0);
    ZSTD_CCtx* c = cctx.get();
    std::size_t rc = ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, d.level());
    if (!ZSTD_isError(rc)) {
        rc = ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog,
                                    std::min(file_window, dcz_max_window_log(d.size())));
    }
    if (!ZSTD_isError(rc) && file_window > cycle_log) {
        rc = ZSTD_CCtx_setParameter(c, ZSTD_c_enableLongDistanceMatching, 1);
    }
    // The CLI compresses with one worker thread (its default), which cuts a body over 512 KiB
    // into jobs differently; a libzstd built without threads refuses and compresses inline.
    if (!ZSTD_isError(rc)) (void)ZSTD_CCtx_setParameter(c, ZSTD_c_nbWorkers, 1);
    if (!ZSTD_isError(rc)) rc = ZSTD_CCtx_refPrefix(c, d.bytes().data(), d.bytes().size());
    if (!ZSTD_isError(rc)) rc = ZSTD_CCtx_setPledgedSrcSize(c, in.size());
    if (ZSTD_isError(rc)) return Status{Code::kInvalidArgument, ZSTD_getErrorName(rc)};
    const std::size_t n = ZSTD_compress2(c, out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n)) return Status{Code::kLibraryError, ZSTD_getErrorName(n)};
    return n;
}

}  // namespace

std::array<char, kDeltaSidecarSuffixSize> delta_sidecar_suffix_chars(
    const DictionaryHash& dictionary) {
    std::array<char, kDeltaSidecarSuffixSize> out{};
    char* o = std::copy(kDeltaSidecarInfix.begin(), kDeltaSidecarInfix.end(), out.begin());
    hex_into(std::span(dictionary).first<kDeltaSidecarHexDigits / 2>(), o);
    return out;
}

std::string delta_sidecar_suffix(const DictionaryHash& dictionary) {
    const auto chars = delta_sidecar_suffix_chars(dictionary);
    return {chars.data(), chars.size()};
}

std::optional<DeltaSidecarName> parse_delta_sidecar_name(std::string_view name) {
    constexpr std::size_t kSuffix = kDeltaSidecarInfix.size() + kDeltaSidecarHexDigits;
    if (name.size() <= kSuffix) return std::nullopt;
    const std::size_t at = name.size() - kSuffix;
    if (name.substr(at, kDeltaSidecarInfix.size()) != kDeltaSidecarInfix) return std::nullopt;
    const std::string_view hex = name.substr(at + kDeltaSidecarInfix.size());
    if (!std::all_of(hex.begin(), hex.end(), is_lower_hex)) return std::nullopt;
    const std::string_view source = name.substr(0, at);
    if (source.back() == '/') return std::nullopt;  // no FILE name before the suffix
    return DeltaSidecarName{source, hex};
}

bool dcz_body_names(std::span<const std::byte> body, const DictionaryHash& dictionary) {
    if (body.size() < kDczHeaderSize) return false;
    const auto header = dcz_header(dictionary);
    return std::memcmp(body.data(), header.data(), header.size()) == 0;
}

Result<DczDelta> make_dcz_delta(const PreparedDictionary& dictionary,
                                std::span<const std::byte> body) {
    EncoderParams p;
    p.coding = Coding::kDcz;
    p.level = dictionary.level();
    p.dictionary = &dictionary;
    DczDelta best;
    best.body.resize(OneShotCompressor::bound(Coding::kDcz, body.size()));
    auto out = std::as_writable_bytes(std::span(best.body.data(), best.body.size()));
    OneShotCompressor live;
    const Result<std::size_t> n = live.compress(p, body, out);
    if (!n.is_ok()) return n.status();
    best.body.resize(n.value());

    // The same header, then --patch-from's frame, if that is smaller.
    std::string other(OneShotCompressor::bound(Coding::kDcz, body.size()), '\0');
    const auto header = dcz_header(dictionary.hash());
    std::memcpy(other.data(), header.data(), header.size());
    auto frame = std::as_writable_bytes(std::span(other.data(), other.size()));
    const Result<std::size_t> m = patch_from_frame(dictionary, body, frame.subspan(kDczHeaderSize));
    if (!m.is_ok()) return m.status();
    if (kDczHeaderSize + m.value() < best.body.size()) {
        other.resize(kDczHeaderSize + m.value());
        best.body = std::move(other);
        best.patch_from = true;
    }
    return best;
}

}  // namespace mc
