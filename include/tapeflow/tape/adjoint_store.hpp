// tapeflow/tape/adjoint_store.hpp - the adjoints of a tape, by identifier.
//
// One adjoint per identifier the tape ever handed out (identifier 0, the
// passive one, included: its adjoint stays 0):
//
//   adjoint:  | id 0 | id 1 | id 2 | ... | id highest |
//
// The vector grows only between sweeps (a sweep indexes it by raw pointer);
// a vector sweep keeps its lanes apart (tape/lane_adjoints.hpp).
#pragma once

#include <cstddef>
#include <vector>

#include "record.hpp"

namespace tapeflow {

template <class Scalar>
class adjoint_store {
public:
    /// Grows to `count` adjoints (new ones 0); never shrinks.
    void grow(std::size_t count) {
        if (adjoints_.size() < count) adjoints_.resize(count, Scalar(0));
    }
    /// Sets every adjoint to 0 (keeps the memory).
    void clear() noexcept {
        for (Scalar& a : adjoints_) a = Scalar(0);
    }
    /// The adjoint of `id`; 0 for one the store has not grown to.
    Scalar get(identifier id) const noexcept { return id < adjoints_.size() ? adjoints_[id] : Scalar(0); }
    /// The adjoint of `id`, which must be below size().
    Scalar& operator[](identifier id) noexcept { return adjoints_[id]; }
    Scalar* data() noexcept { return adjoints_.data(); }
    std::size_t size() const noexcept { return adjoints_.size(); }
    /// Memory held.
    std::size_t bytes() const noexcept { return adjoints_.capacity() * sizeof(Scalar); }

private:
    std::vector<Scalar> adjoints_;
};

}  // namespace tapeflow
