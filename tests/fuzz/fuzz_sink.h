// SPDX-License-Identifier: Apache-2.0
// CheckingSink: an mc::Sink for fuzz targets that checks the reserve()/commit() contract.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <memory>
#include <span>
#include <string>

#include "fuzz_check.h"
#include "mc/sink.h"
#include "mc/status.h"

namespace mc_fuzz {

// A sink that checks the Sink contract: one reserve() then one commit(used <= reserved). Each
// reserve() is a fresh heap block of exactly the lent size, so ASan catches an encoder writing
// past it. With `vary`, the lent sizes change from call to call (as a bucket sink's would).
class CheckingSink final : public mc::Sink {
public:
    CheckingSink(std::size_t chunk, bool vary) : chunk_(chunk), vary_(vary) {}

    std::span<std::byte> reserve() override {
        MC_FUZZ_CHECK(!pending_);  // the last reserve() was committed
        std::size_t n = chunk_;
        if (vary_) {
            static constexpr std::size_t kDivisors[] = {1, 3, 1000000, 2, 64};
            n = std::max<std::size_t>(1, chunk_ / kDivisors[calls_ % std::size(kDivisors)]);
        }
        ++calls_;
        block_ = std::make_unique<std::byte[]>(n);
        lent_ = n;
        pending_ = true;
        return {block_.get(), n};
    }

    mc::Status commit(std::size_t used) override {
        MC_FUZZ_CHECK(pending_);
        MC_FUZZ_CHECK(used <= lent_);
        out_.append(reinterpret_cast<const char*>(block_.get()), used);
        pending_ = false;
        block_.reset();
        return mc::Status::ok();
    }

    [[nodiscard]] const std::string& data() const {
        MC_FUZZ_CHECK(!pending_);  // nothing lent and left uncommitted when write() returns
        return out_;
    }

private:
    std::string out_;
    std::unique_ptr<std::byte[]> block_;
    std::size_t chunk_;
    std::size_t lent_ = 0;
    std::size_t calls_ = 0;
    bool vary_;
    bool pending_ = false;
};

}  // namespace mc_fuzz
