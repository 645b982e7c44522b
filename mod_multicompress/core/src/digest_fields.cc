// SPDX-License-Identifier: Apache-2.0
// RFC 9530 integrity fields: parsing (through the RFC 9651 Dictionary parser), digests from
// libcrypto, serialization.
#include "mc/digest_fields.h"

#include <openssl/evp.h>

#include "mc/structured_field.h"

namespace mc {

std::optional<DigestAlgorithm> parse_digest_algorithm(std::string_view key) {
    // Keys are lowercase by the Dictionary syntax (RFC 9651 §3.2): compared as they are.
    if (key == "sha-256") return DigestAlgorithm::kSha256;
    if (key == "sha-512") return DigestAlgorithm::kSha512;
    return std::nullopt;
}

std::string_view digest_algorithm_key(DigestAlgorithm a) {
    return a == DigestAlgorithm::kSha256 ? "sha-256" : "sha-512";
}

std::size_t digest_size(DigestAlgorithm a) {
    return a == DigestAlgorithm::kSha256 ? 32 : 64;
}

DigestAlgorithms DigestField::algorithms() const {
    DigestAlgorithms set = 0;
    for (const Member& m : members)
        set = static_cast<DigestAlgorithms>(set | digest_bit(m.algorithm));
    return set;
}

Result<DigestField> parse_digest_field(std::string_view value) {
    auto dict = sf::parse_dictionary(value);
    if (!dict.is_ok()) return dict.status();
    DigestField field;
    for (sf::Member& m : dict.value()) {
        const auto algorithm = parse_digest_algorithm(m.key);
        if (!algorithm) {
            ++field.unknown;
            continue;
        }
        if (m.kind != sf::Kind::kByteSequence) {
            return Status{Code::kInvalidArgument,
                          "a sha-256 or sha-512 value that is not a byte "
                          "sequence"};
        }
        if (m.bytes.size() != digest_size(*algorithm)) {
            return Status{Code::kInvalidArgument, "a digest of the wrong length"};
        }
        field.members.push_back({*algorithm, std::move(m.bytes)});
    }
    return field;
}

namespace {
const EVP_MD* md_of(std::size_t i) {
    return static_cast<DigestAlgorithm>(i) == DigestAlgorithm::kSha256 ? EVP_sha256()
                                                                       : EVP_sha512();
}
}  // namespace

Digester::Digester(DigestAlgorithms algorithms) {
    for (std::size_t i = 0; i < ctx_.size(); ++i) {
        if ((algorithms & digest_bit(static_cast<DigestAlgorithm>(i))) == 0) continue;
        EVP_MD_CTX* ctx = EVP_MD_CTX_new();
        if (ctx == nullptr) continue;  // finish() then gives no digest: nothing matches it
        if (EVP_DigestInit_ex(ctx, md_of(i), nullptr) != 1) {
            EVP_MD_CTX_free(ctx);
            continue;
        }
        ctx_[i] = ctx;
    }
}

Digester::~Digester() {
    for (void* ctx : ctx_) EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx));
}

void Digester::update(std::span<const std::byte> bytes) {
    if (bytes.empty()) return;
    for (void* ctx : ctx_) {
        if (ctx != nullptr)
            EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx), bytes.data(), bytes.size());
    }
}

DigestValues Digester::finish() {
    DigestValues out;
    for (std::size_t i = 0; i < ctx_.size(); ++i) {
        auto* ctx = static_cast<EVP_MD_CTX*>(ctx_[i]);
        if (ctx == nullptr) continue;
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        if (EVP_DigestFinal_ex(ctx, md, &len) == 1) out[i].assign(reinterpret_cast<char*>(md), len);
        EVP_MD_CTX_free(ctx);
        ctx_[i] = nullptr;
    }
    return out;
}

bool digest_field_matches(const DigestField& field, const DigestValues& values) {
    for (const DigestField::Member& m : field.members) {
        const std::string& have = values[static_cast<std::size_t>(m.algorithm)];
        if (have.empty() || have != m.value) return false;
    }
    return true;
}

std::string format_digest_field(const DigestField& field, const DigestValues& values) {
    std::string out;
    for (const DigestField::Member& m : field.members) {
        if (values[static_cast<std::size_t>(m.algorithm)].empty()) return {};
        if (!out.empty()) out += ", ";
        out += digest_algorithm_key(m.algorithm);
        out += "=:";
        out += sf::base64(values[static_cast<std::size_t>(m.algorithm)]);
        out += ':';
    }
    return out;
}

}  // namespace mc
