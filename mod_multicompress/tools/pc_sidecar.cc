// SPDX-License-Identifier: Apache-2.0
// multicompress-precompress: one sidecar, written through a temporary file and rename(2).
#include "pc_sidecar.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include "mc/encoder.h"
#include "mc/sink.h"

namespace mc::precompress {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kReadChunk = 256 * 1024;
constexpr std::size_t kWriteBuffer = 256 * 1024;
// Encoders get at least this much room per reserve(); a smaller tail is written out first.
constexpr std::size_t kMinReserve = 16 * 1024;

std::string errno_message(const fs::path& p, std::string_view what, int err) {
    return p.string() + ": " + std::string(what) + ": " + std::strerror(err);
}

class UniqueFd {
public:
    explicit UniqueFd(int fd = -1) : fd_(fd) {}
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() { reset(); }
    [[nodiscard]] int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }
    void reset(int fd = -1) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = fd;
    }
    /// close(2) with its result, which matters for files written over NFS.
    int close() {
        const int rc = ::close(fd_);
        fd_ = -1;
        return rc;
    }

private:
    int fd_;
};

/// A temporary file next to the sidecar; unlinked unless committed by rename.
class TempFile {
public:
    TempFile() = default;
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile() {
        fd_.reset();
        if (!path_.empty()) ::unlink(path_.c_str());
    }

    /// Creates DIR/.precompress-XXXXXX (mode 0600 until the source's mode is copied).
    int create(const fs::path& dir) {
        std::string tmpl = (dir / ".precompress-XXXXXX").string();
        const int fd = ::mkostemp(tmpl.data(), O_CLOEXEC);
        if (fd < 0) return errno;
        fd_.reset(fd);
        path_ = std::move(tmpl);
        return 0;
    }
    [[nodiscard]] int fd() const { return fd_.get(); }
    [[nodiscard]] const std::string& path() const { return path_; }
    int close() { return fd_.close(); }
    /// After a successful rename: nothing left to clean up.
    void release() { path_.clear(); }

private:
    UniqueFd fd_;
    std::string path_;
};

/// A Sink that buffers into memory and writes to a file descriptor. It refuses (kLimitExceeded)
/// once the output reaches `limit` bytes, which stops the encoder as soon as the sidecar is known
/// not to be smaller than its source.
class FileSink final : public Sink {
public:
    FileSink(int fd, std::uint64_t limit) : buf_(kWriteBuffer), fd_(fd), limit_(limit) {}

    std::span<std::byte> reserve() override { return {buf_.data() + used_, buf_.size() - used_}; }

    Status commit(std::size_t used) override {
        used_ += std::min(used, buf_.size() - used_);
        total_ += used;
        if (total_ >= limit_) {
            over_limit_ = true;
            return {Code::kLimitExceeded, "not smaller than the source"};
        }
        if (buf_.size() - used_ < kMinReserve) return drain();
        return Status::ok();
    }

    /// Writes what is buffered.
    Status drain() {
        std::size_t off = 0;
        while (off < used_) {
            const ssize_t n = ::write(fd_, buf_.data() + off, used_ - off);
            if (n < 0) {
                if (errno == EINTR) continue;
                errno_ = errno;
                return {Code::kLibraryError, "write failed"};
            }
            off += static_cast<std::size_t>(n);
        }
        used_ = 0;
        return Status::ok();
    }

    [[nodiscard]] std::uint64_t total() const { return total_; }
    [[nodiscard]] bool over_limit() const { return over_limit_; }
    [[nodiscard]] int write_errno() const { return errno_; }

private:
    std::vector<std::byte> buf_;
    std::size_t used_ = 0;
    int fd_;
    std::uint64_t limit_;
    std::uint64_t total_ = 0;
    bool over_limit_ = false;
    int errno_ = 0;
};

// The directory a sidecar goes in ("." for a bare file name).
fs::path dir_of(const fs::path& p) {
    fs::path d = p.parent_path();
    return d.empty() ? fs::path(".") : d;
}

// Keeps the progress total exact: whatever was not read (an early stop) is counted at the end.
class ProgressCredit {
public:
    ProgressCredit(std::atomic<std::uint64_t>& progress, std::uint64_t planned)
        : progress_(progress), planned_(planned) {}
    ProgressCredit(const ProgressCredit&) = delete;
    ProgressCredit& operator=(const ProgressCredit&) = delete;
    ~ProgressCredit() {
        if (counted_ < planned_) progress_ += planned_ - counted_;
    }
    void add(std::uint64_t n) {
        const std::uint64_t credit = std::min(n, planned_ - std::min(planned_, counted_));
        counted_ += n;
        progress_ += credit;
    }

private:
    std::atomic<std::uint64_t>& progress_;
    std::uint64_t planned_;
    std::uint64_t counted_ = 0;
};

// Gives the temporary file the source's permission bits (never executable), its owner when run
// as root, and its mtime; syncs it with --fsync. Returns "" or what failed.
std::string finish_temp(TempFile& tmp, const struct stat& source, const WriteOptions& options) {
    // Readable by whoever can read the source (httpd), never executable.
    if (::fchmod(tmp.fd(), source.st_mode & 0666) != 0) {
        return errno_message(tmp.path(), "chmod", errno);
    }
    if (::geteuid() == 0) {
        // Best effort: keeps a tree owned by the web user owned by it when run as root.
        [[maybe_unused]] const int ignored = ::fchown(tmp.fd(), source.st_uid, source.st_gid);
    }
    if (options.fsync && ::fsync(tmp.fd()) != 0) return errno_message(tmp.path(), "fsync", errno);
    // The sidecar carries the source's mtime: MultiCompressStatic serves it while mtime(sidecar)
    // >= mtime(source), and any later edit of the source makes it stale at once.
    const timespec times[2] = {{0, UTIME_OMIT}, source.st_mtim};
    if (::futimens(tmp.fd(), times) != 0) return errno_message(tmp.path(), "set mtime", errno);
    return {};
}

// Closes the temporary file and renames it over `sidecar` (then syncs the directory with
// --fsync). Returns "" or what failed.
std::string rename_into_place(TempFile& tmp, const fs::path& sidecar, const fs::path& dir,
                              const WriteOptions& options) {
    if (tmp.close() != 0) return errno_message(tmp.path(), "close", errno);
    if (::rename(tmp.path().c_str(), sidecar.c_str()) != 0) {
        return errno_message(sidecar, "cannot rename into place", errno);
    }
    tmp.release();
    if (options.fsync) {
        const UniqueFd dfd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (!dfd || ::fsync(dfd.get()) != 0) return errno_message(dir, "fsync directory", errno);
    }
    return {};
}

}  // namespace

bool same_contents_stamp(const struct stat& a, const struct stat& b) {
    return a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
           a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

std::string read_whole(const fs::path& path, std::string& out, struct stat& st) {
    const UniqueFd in(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!in) return errno_message(path, "cannot open", errno);
    if (::fstat(in.get(), &st) != 0) return errno_message(path, "cannot stat", errno);
    if (!S_ISREG(st.st_mode)) return path.string() + ": not a regular file";
    out.resize(static_cast<std::size_t>(st.st_size));
    std::size_t got = 0;
    while (got < out.size()) {
        const ssize_t n = ::read(in.get(), out.data() + got, out.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno_message(path, "read", errno);
        if (n == 0) break;
        got += static_cast<std::size_t>(n);
    }
    struct stat after {};
    char probe = 0;
    if (got != out.size() || ::read(in.get(), &probe, 1) != 0 || ::fstat(in.get(), &after) != 0 ||
        !same_contents_stamp(st, after)) {
        return path.string() + ": changed while reading; run again";
    }
    return {};
}

std::string install_sidecar(std::string_view bytes, const fs::path& sidecar,
                            const struct stat& source, const WriteOptions& options) {
    TempFile tmp;
    const fs::path dir = dir_of(sidecar);
    if (const int err = tmp.create(dir); err != 0) {
        return errno_message(dir, "cannot create a temporary file", err);
    }
    std::size_t off = 0;
    while (off < bytes.size()) {
        const ssize_t n = ::write(tmp.fd(), bytes.data() + off, bytes.size() - off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return errno_message(tmp.path(), "write", errno);
        off += static_cast<std::size_t>(n);
    }
    if (std::string err = finish_temp(tmp, source, options); !err.empty()) return err;
    return rename_into_place(tmp, sidecar, dir, options);
}

SidecarState stat_sidecar(const fs::path& path, const timespec& source_mtime, std::uint64_t& size,
                          std::string& error) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
        if (errno != ENOENT && errno != ENOTDIR) error = errno_message(path, "cannot stat", errno);
        return SidecarState::kMissing;
    }
    if (!S_ISREG(st.st_mode)) return SidecarState::kNotAFile;
    size = static_cast<std::uint64_t>(st.st_size);
    return not_older(st.st_mtim, source_mtime) ? SidecarState::kFresh : SidecarState::kStale;
}

bool remove_stale(const fs::path& path, const timespec& source_mtime, bool even_if_fresh,
                  std::string& error) {
    // lstat: a symlinked sidecar is removed as a link, never through it.
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno != ENOENT && errno != ENOTDIR) error = errno_message(path, "cannot stat", errno);
        return false;
    }
    if (S_ISDIR(st.st_mode)) return false;
    if (!even_if_fresh) {
        struct stat target {};
        if (::stat(path.c_str(), &target) == 0 && not_older(target.st_mtim, source_mtime)) {
            return false;  // fresh (perhaps just written by a concurrent run): keep it
        }
    }
    if (::unlink(path.c_str()) != 0) {
        if (errno != ENOENT) error = errno_message(path, "cannot remove stale sidecar", errno);
        return false;
    }
    return true;
}

SidecarResult write_sidecar(const Source& src, const fs::path& sidecar, const EncoderParams& params,
                            const WriteOptions& options, std::atomic<std::uint64_t>& progress,
                            const std::atomic<bool>& stop) {
    SidecarResult r;
    ProgressCredit credit(progress, src.size);
    auto fail = [&r](std::string message) {
        r.outcome = Outcome::kFailed;
        r.error = std::move(message);
        return r;
    };

    const UniqueFd in(::open(src.path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY));
    if (!in) return fail(errno_message(src.path, "cannot open", errno));
    struct stat before {};
    if (::fstat(in.get(), &before) != 0) return fail(errno_message(src.path, "cannot stat", errno));
    if (!S_ISREG(before.st_mode)) return fail(src.path.string() + ": not a regular file");
    const auto size = static_cast<std::uint64_t>(before.st_size);
    r.in_bytes = size;
    ::posix_fadvise(in.get(), 0, 0, POSIX_FADV_SEQUENTIAL);

    TempFile tmp;
    const fs::path dir = dir_of(sidecar);
    if (const int err = tmp.create(dir); err != 0) {
        return fail(errno_message(dir, "cannot create a temporary file", err));
    }

    EncoderParams p = params;
    p.size_hint = static_cast<std::int64_t>(size);
    p.exact_size = true;  // we read exactly `size` bytes or give up
    auto made = make_encoder(p);
    if (!made.is_ok()) return fail(src.path.string() + ": " + made.status().reason());
    const std::unique_ptr<Encoder> enc = std::move(made).value();

    FileSink sink(tmp.fd(), size);
    auto encoder_failed = [&](Status st) {
        if (sink.over_limit()) {
            r.outcome = Outcome::kNotSmaller;
            std::string err;
            r.removed_stale = remove_stale(sidecar, before.st_mtim, options.remove_fresh, err);
            if (!err.empty()) return fail(err);
            return r;
        }
        if (sink.write_errno() != 0)
            return fail(errno_message(tmp.path(), "write", sink.write_errno()));
        return fail(src.path.string() + ": compression failed: " + st.reason());
    };

    std::vector<std::byte> chunk(kReadChunk);
    std::uint64_t read_total = 0;
    for (;;) {
        if (stop.load(std::memory_order_relaxed)) {
            r.outcome = Outcome::kInterrupted;
            return r;
        }
        const ssize_t n = ::read(in.get(), chunk.data(), chunk.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail(errno_message(src.path, "read", errno));
        }
        if (n == 0) break;
        const auto got = static_cast<std::size_t>(n);
        read_total += got;
        credit.add(got);
        if (read_total > size) break;  // grew while we read; caught below
        if (Status st = enc->write({chunk.data(), got}, Flush::kNone, sink); !st.is_ok()) {
            return encoder_failed(st);
        }
    }
    if (read_total != size) {
        return fail(src.path.string() + ": changed while compressing (size); run again");
    }
    if (Status st = enc->write({}, Flush::kFinish, sink); !st.is_ok()) return encoder_failed(st);
    if (Status st = sink.drain(); !st.is_ok()) return encoder_failed(st);

    if (std::string err = finish_temp(tmp, before, options); !err.empty()) return fail(err);
    struct stat after {};
    if (::fstat(in.get(), &after) != 0 || !same_contents_stamp(before, after)) {
        return fail(src.path.string() + ": changed while compressing; run again");
    }
    if (std::string err = rename_into_place(tmp, sidecar, dir, options); !err.empty()) {
        return fail(err);
    }
    r.outcome = Outcome::kWritten;
    r.out_bytes = sink.total();
    return r;
}

}  // namespace mc::precompress
