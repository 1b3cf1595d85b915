// tapeflow/stream/tile.hpp - fixed-size blocks of tape bytes.
//
// The tape is a sequence of tiles; records are appended to the last one and
// a record never straddles two tiles (when it does not fit, the rest of the
// tile stays unused and the record starts the next tile):
//
//   tile 0                     tile 1                 tile 2 (current)
//   +----+----+------+---+     +------+----+---+      +----+----+.........+
//   | r0 | r1 |  r2  |///|     |  r3  | r4 |///|      | r5 | r6 |  free   |
//   +----+----+------+---+     +------+----+---+      +----+----+.........+
//                    used^                  used^               ^cursor
//
// tile_list owns the memory; reset() keeps every tile for the next
// recording, so recording is allocation-free once the tape has grown.
//
// Past the first 2 MiB, tile_list allocates tiles in slabs of at least 2 MiB
// (the fewest whole tiles that cover it) aligned to 2 MiB and asks Linux for
// transparent huge pages on them: a first gradient writes every byte of fresh tape memory, and with
// 4 KiB pages it paid one page fault per 4 KiB (heat: 19 714 faults, 10x the
// time of a later gradient on this machine class; see docs/performance.md
// "The first gradient"). A slab is handed out tile by tile, so
// `allocated()` grows by up to a slab at once.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tapeflow {

namespace detail {
/// Size and alignment of a slab of tiles: an x86-64 huge page.
inline constexpr std::size_t slab_bytes = std::size_t(2) << 20;

/// Asks the kernel to back [data, data + bytes) with huge pages (a hint: it
/// may not, and nothing else changes).
inline void advise_huge_pages(std::byte* data, std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    ::madvise(data, bytes, MADV_HUGEPAGE);
#else
    (void)data;
    (void)bytes;
#endif
}
}  // namespace detail

/// One tile: `capacity` bytes aligned to a cache line; `used` bytes hold
/// records. It owns its memory, or is a view of a slab that its tile_list owns.
class tile {
public:
    static constexpr std::size_t alignment = 64;

    explicit tile(std::size_t capacity)
        : data_(static_cast<std::byte*>(::operator new(capacity, std::align_val_t{alignment}))),
          capacity_(capacity),
          owns_(true) {}
    /// A tile in memory owned elsewhere (a slab of a tile_list).
    tile(std::byte* data, std::size_t capacity) noexcept : data_(data), capacity_(capacity), owns_(false) {}
    tile(tile&& other) noexcept
        : data_(other.data_), capacity_(other.capacity_), used_(other.used_), owns_(other.owns_) {
        other.data_ = nullptr;
    }
    tile& operator=(tile&&) = delete;
    tile(const tile&) = delete;
    ~tile() {
        if (data_ && owns_) ::operator delete(data_, std::align_val_t{alignment});
    }

    std::byte* data() noexcept { return data_; }
    const std::byte* data() const noexcept { return data_; }
    std::size_t capacity() const noexcept { return capacity_; }
    std::size_t used() const noexcept { return used_; }
    void set_used(std::size_t bytes) noexcept { used_ = bytes; }

private:
    std::byte* data_;
    std::size_t capacity_;
    std::size_t used_ = 0;
    bool owns_;
};

// Non-temporal stores through the compilers' builtins, not <immintrin.h>:
// with -march=native that header costs every translation unit about 0.4 s
// of parsing (a fifth of the umbrella header's). 32-byte stores where AVX is
// on (16-byte ones copied 18% slower to DRAM here).
#if (defined(__GNUC__) || defined(__clang__)) && defined(__SSE2__)
#define TAPEFLOW_NON_TEMPORAL_STORES 1
namespace detail {
#if defined(__AVX__)
constexpr int stream_chunk_bytes = 32;
#else
constexpr int stream_chunk_bytes = 16;
#endif
// the vector type of the builtins, and the same allowed to alias tape bytes
using stream_vector = long long __attribute__((vector_size(stream_chunk_bytes)));
using stream_chunk = long long __attribute__((vector_size(stream_chunk_bytes), may_alias));
inline void store_non_temporal(std::byte* to, const std::byte* from) noexcept {
    const stream_vector v = *reinterpret_cast<const stream_chunk*>(from);
#if defined(__clang__)
    __builtin_nontemporal_store(v, reinterpret_cast<stream_vector*>(to));
#elif defined(__AVX__)
    __builtin_ia32_movntdq256(reinterpret_cast<stream_vector*>(to), v);
#else
    __builtin_ia32_movntdq(reinterpret_cast<stream_vector*>(to), v);
#endif
}
}  // namespace detail
#endif

/// Copies `bytes` from a cache-resident tile to a tile in memory with
/// non-temporal stores: the destination lines are not read first (no
/// read-for-ownership) and do not evict the cache. Both pointers must be
/// 64-byte aligned; up to 63 bytes past `bytes` may be copied (tiles are
/// multiples of 64 bytes, so this stays inside them).
inline void stream_copy(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept {
    const std::size_t rounded = (bytes + 63) & ~std::size_t(63);
#if defined(TAPEFLOW_NON_TEMPORAL_STORES)
    for (std::size_t i = 0; i < rounded; i += detail::stream_chunk_bytes)
        detail::store_non_temporal(dst + i, src + i);
    __builtin_ia32_sfence();
#else
    std::memcpy(dst, src, rounded);
#endif
}

/// The tiles of one tape, in recording order; keeps spare tiles after reset.
class tile_list {
public:
    /// `tile_bytes`: more than 0, a multiple of 64 (the tape rounds it).
    explicit tile_list(std::size_t tile_bytes) : tile_bytes_(tile_bytes) {}
    tile_list(const tile_list&) = delete;
    tile_list& operator=(const tile_list&) = delete;
    ~tile_list() {
        tiles_.clear();  // views of the slabs first
        for (std::byte* slab : slabs_) ::operator delete(slab, std::align_val_t{detail::slab_bytes});
    }

    std::size_t tile_bytes() const noexcept { return tile_bytes_; }
    /// Tiles in use (the last one is the one being written).
    std::size_t size() const noexcept { return in_use_; }
    /// Tiles allocated, in use or spare.
    std::size_t allocated() const noexcept { return tiles_.size(); }
    /// The most tiles the list may hold (a memory budget; unlimited by
    /// default). A slab never takes it past them: near the limit tiles come
    /// one at a time. Staying within it is the caller's: tile_stream pushes
    /// no tile past limit().
    void set_limit(std::size_t most) noexcept { limit_ = most; }
    std::size_t limit() const noexcept { return limit_; }

    tile& operator[](std::size_t i) noexcept { return tiles_[i]; }
    const tile& operator[](std::size_t i) const noexcept { return tiles_[i]; }

    /// Makes one more tile current (reusing a spare one) and returns it empty.
    tile& push() {
        if (in_use_ == tiles_.size()) grow();
        tile& t = tiles_[in_use_++];
        t.set_used(0);
        return t;
    }

    /// Keeps the first `n` tiles in use; the rest become spare.
    void truncate(std::size_t n) noexcept { in_use_ = n; }

private:
    // One tile while less than a slab is held (a small tape stays small),
    // then a slab: the fewest whole tiles that cover 2 MiB (one huge page
    // at least; tile_bytes is a multiple of 64, so every tile stays aligned
    // to a cache line).
    void grow() {
        const std::size_t per_slab = (detail::slab_bytes + tile_bytes_ - 1) / tile_bytes_;
        const std::size_t room = limit_ - std::min(limit_, tiles_.size());
        if (tiles_.size() * tile_bytes_ < detail::slab_bytes || room < per_slab) {
            tiles_.emplace_back(tile_bytes_);
            return;
        }
        make_room(tiles_, per_slab);  // nothing throws once the slab is allocated
        make_room(slabs_, 1);
        const std::size_t bytes = per_slab * tile_bytes_;
        auto* slab = static_cast<std::byte*>(::operator new(bytes, std::align_val_t{detail::slab_bytes}));
        slabs_.push_back(slab);
        detail::advise_huge_pages(slab, bytes);
        for (std::size_t i = 0; i < per_slab; ++i) tiles_.emplace_back(slab + i * tile_bytes_, tile_bytes_);
    }

    // Capacity for n more elements, growing geometrically as emplace_back
    // does (an exact reserve moved every tile at every slab).
    template <class Vector>
    static void make_room(Vector& v, std::size_t n) {
        if (v.capacity() < v.size() + n) v.reserve(std::max(v.size() + n, 2 * v.capacity()));
    }

    std::vector<tile> tiles_;
    std::vector<std::byte*> slabs_;  // owned, aligned to slab_bytes
    std::size_t in_use_ = 0;
    std::size_t tile_bytes_;
    std::size_t limit_ = std::numeric_limits<std::size_t>::max();
};

}  // namespace tapeflow
