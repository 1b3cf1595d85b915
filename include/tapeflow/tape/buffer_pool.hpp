// tapeflow/tape/buffer_pool.hpp - large buffers of external entries, kept
// by the tape from one recording to the next.
//
// An external entry (custom adjoint, Eigen product, solve) holds O(n^2)
// numbers and identifiers; a gradient that is taken again and again frees
// them at reset() and allocates them again while recording. glibc hands the
// freed megabytes back to the kernel (heap trimming) and the next recording
// pays a page fault per 4 KiB to get them again: at n = 256 that was about
// 950 faults and a quarter of the product gradient's time. The tape keeps
// the buffers instead, like it keeps its tiles:
//
//   record:  pooled_buffer b(pool, n)   take(): the smallest spare with room
//                                       for n, else a new vector
//   entry holds b ... reset() destroys the entry
//            ~pooled_buffer             give(): back into the pool (emptied,
//                                       capacity kept)
//
// A pool belongs to one tape and is used by the thread that records on it.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace tapeflow {

template <class T>
class buffer_pool {
public:
    /// Most buffers kept; more are freed.
    static constexpr std::size_t max_spares = 64;

    buffer_pool() = default;
    buffer_pool(const buffer_pool&) = delete;
    buffer_pool& operator=(const buffer_pool&) = delete;

    /// An empty vector with room for at least n elements (for n = 0 a new
    /// one: a spare goes to whoever knows how much it needs).
    std::vector<T> take(std::size_t n) {
        if (n == 0) return {};
        std::size_t best = spares_.size();
        for (std::size_t i = 0; i < spares_.size(); ++i)
            if (spares_[i].capacity() >= n && (best == spares_.size() || spares_[i].capacity() < spares_[best].capacity()))
                best = i;
        std::vector<T> v;
        if (best != spares_.size()) {
            v = std::move(spares_[best]);
            spares_[best] = std::move(spares_.back());
            spares_.pop_back();
        }
        v.reserve(n);
        return v;
    }

    /// Keeps `v`'s memory for a later take().
    void give(std::vector<T>&& v) noexcept {
        if (v.capacity() == 0 || spares_.size() >= max_spares || spares_.capacity() == spares_.size()) return;
        v.clear();
        spares_.push_back(std::move(v));  // no reallocation: checked above
    }

    /// Reserves the pool's own bookkeeping (so give() never allocates).
    void prepare() { spares_.reserve(max_spares); }

    /// Bytes held by the spare buffers.
    std::size_t bytes() const noexcept {
        std::size_t n = 0;
        for (const auto& v : spares_) n += v.capacity() * sizeof(T);
        return n;
    }

private:
    std::vector<std::vector<T>> spares_;
};

/// A vector taken from a buffer_pool and given back when destroyed.
template <class T>
class pooled_buffer {
public:
    pooled_buffer() = default;
    /// An empty vector with room for n elements, from `pool`.
    pooled_buffer(buffer_pool<T>& pool, std::size_t n) : pool_(&pool), data_(pool.take(n)) {}
    pooled_buffer(pooled_buffer&& other) noexcept : pool_(other.pool_), data_(std::move(other.data_)) {
        other.pool_ = nullptr;
    }
    pooled_buffer& operator=(pooled_buffer&& other) noexcept {
        if (this != &other) {
            give_back();
            pool_ = other.pool_;
            data_ = std::move(other.data_);
            other.pool_ = nullptr;
        }
        return *this;
    }
    pooled_buffer(const pooled_buffer&) = delete;
    pooled_buffer& operator=(const pooled_buffer&) = delete;
    ~pooled_buffer() { give_back(); }

    std::vector<T>& operator*() noexcept { return data_; }
    const std::vector<T>& operator*() const noexcept { return data_; }
    std::vector<T>* operator->() noexcept { return &data_; }
    const std::vector<T>* operator->() const noexcept { return &data_; }

    /// Room for n elements. An empty buffer too small for them swaps its
    /// memory for the pool's best fit (the vector's own growth otherwise).
    void reserve(std::size_t n) {
        if (pool_ != nullptr && data_.empty() && data_.capacity() < n) {
            std::vector<T> fit = pool_->take(n);
            pool_->give(std::move(data_));
            data_ = std::move(fit);
        }
        data_.reserve(n);
    }

    /// Gives the memory back now; the buffer is empty afterwards.
    void give_back() noexcept {
        if (pool_ != nullptr) pool_->give(std::move(data_));
        pool_ = nullptr;
        data_ = std::vector<T>();
    }

private:
    buffer_pool<T>* pool_ = nullptr;
    std::vector<T> data_;
};

}  // namespace tapeflow
