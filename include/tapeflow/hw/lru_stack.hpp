// tapeflow/hw/lru_stack.hpp - LRU stack distances of cache-line accesses.
//
// The stack distance of an access is the number of distinct lines touched
// since the previous access to the same line. A fully associative LRU cache
// of C lines hits exactly the accesses of distance < C, so one pass gives
// the misses at the configured capacity and, through a histogram, at every
// other capacity.
//
// Lines live in two key spaces: 0 for lines that are touched again and again
// (adjoint lines, keyed by line number) and 1 for lines of a stream that is
// read once (tape lines, keyed by a counter the caller advances). The last
// access time of every line is kept; the count of lines last touched in
// (t_prev, t_now) is a prefix-sum difference over a Fenwick tree indexed by
// time. When the times run past the tree, they are renumbered 1..m in order
// (m = lines seen) and the tree rebuilt: amortized O(log) per access.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace tapeflow {

class lru_stack {
public:
    /// Distance of a line's first access (a cold miss).
    static constexpr std::uint64_t cold = std::numeric_limits<std::uint64_t>::max();

    /// Touches line `key` of key space `space` (0 or 1); returns its stack
    /// distance, or `cold` on its first access.
    std::uint64_t access(int space, std::uint64_t key) {
        std::vector<std::uint64_t>& last = last_[space];
        if (key >= last.size()) last.resize(std::max<std::size_t>(key + 1, last.size() * 2), 0);
        if (time_ + 1 >= tree_.size()) compact();
        const std::uint64_t now = ++time_;
        const std::uint64_t before = last[key];
        std::uint64_t distance = cold;
        if (before != 0) {
            distance = std::uint64_t(prefix(now - 1) - prefix(before));  // keys touched since: >= 0
            add(before, -1);
        } else {
            ++distinct_;
        }
        add(now, +1);
        last[key] = now;
        return distance;
    }

    /// Lines of key space `space` among the `capacity` most recently used
    /// (those an LRU cache of `capacity` lines holds now).
    std::uint64_t resident(int space, std::uint64_t capacity) const {
        std::uint64_t n = 0;
        const std::int64_t all = prefix(time_);
        for (std::uint64_t t : last_[space])
            if (t != 0 && std::uint64_t(all - prefix(t)) < capacity) ++n;
        return n;
    }

    /// Distinct lines touched so far.
    std::uint64_t distinct() const noexcept { return distinct_; }

    /// Forgets every line.
    void clear() {
        last_[0].clear();
        last_[1].clear();
        tree_.assign(1, 0);
        time_ = 0;
        distinct_ = 0;
    }

private:
    std::int64_t prefix(std::uint64_t i) const noexcept {
        std::int64_t s = 0;
        for (; i > 0; i &= i - 1) s += tree_[i];
        return s;
    }
    void add(std::uint64_t i, std::int64_t v) noexcept {
        for (; i < tree_.size(); i += i & (~i + 1)) tree_[i] += v;
    }

    // Renumbers the last access times 1..m, keeping their order, and
    // rebuilds the tree with room for as many accesses again.
    void compact() {
        std::vector<std::pair<std::uint64_t, std::uint64_t*>> live;
        live.reserve(distinct_);
        for (auto& space : last_)
            for (std::uint64_t& t : space)
                if (t != 0) live.emplace_back(t, &t);
        std::sort(live.begin(), live.end());
        for (std::size_t i = 0; i < live.size(); ++i) *live[i].second = i + 1;
        const std::size_t m = live.size();
        tree_.assign(std::max<std::size_t>(2 * m + 2, 1 << 16), 0);
        for (std::size_t i = 1; i < tree_.size(); ++i) {  // linear build: ones at 1..m
            if (i <= m) tree_[i] += 1;
            const std::size_t parent = i + (i & (~i + 1));
            if (parent < tree_.size()) tree_[parent] += tree_[i];
        }
        time_ = m;
    }

    std::vector<std::uint64_t> last_[2];       // last access time per line (0: never)
    std::vector<std::int64_t> tree_ = {0};     // Fenwick tree over times 1..size-1
    std::uint64_t time_ = 0;
    std::uint64_t distinct_ = 0;
};

}  // namespace tapeflow
