// tapeflow/tape/lane_adjoints.hpp - N adjoints per identifier, for the
// vector reverse sweep (basic_tape::sweep(lane_adjoints&)).
//
// A scalar sweep carries one adjoint per identifier, so the Jacobian of m
// outputs takes m sweeps, each reading the whole tape. A vector sweep
// carries Lanes adjoints per identifier at once: seed output i in lane i,
// sweep once, and lane i of an input's row is row i of the Jacobian. The
// tape and its records are unchanged; each record's partials are read once
// and applied to all lanes, so the tape is read ceil(m / Lanes) times
// instead of m.
//
//   values_:  | id 0: lane 0 .. Lanes-1 | id 1: lane 0 .. Lanes-1 | ...
//               (always 0)                 one row of Lanes scalars per identifier
//
//   sweep, per record (lhs; (partial_i, id_i)):
//     a[l] = row(lhs)[l];  row(lhs)[l] = 0 (not for an update record)  for every lane l
//     row(id_i)[l] += partial_i * a[l]    for the lanes l whose a[l] != 0
//
// Lane l computes exactly what a scalar sweep seeded like lane l computes
// (the same products and sums in the same order, a lane whose adjoint is 0
// adds nothing), so a lane equals a scalar sweep bit for bit when the
// compiler contracts neither into fused multiply-adds differently.
//
// **Example**:
//   tapeflow::lane_adjoints<double, 8> bar(tape);   // after recording y[0..7] of x
//   for (std::size_t l = 0; l < 8; ++l) bar.set(y[l], l, 1.0);
//   tape.sweep(bar);
//   double dy3_dx0 = bar.get(x[0], 3);
//   bar.clear();                                   // before seeding the next block
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "record.hpp"

namespace tapeflow {

template <class Scalar>
class basic_tape;
template <class Scalar>
class basic_real;

/// Lanes adjoints per identifier of one tape; swept by basic_tape::sweep.
/// \requires 1 <= Lanes <= 64 (a compile-time constant: the sweep's inner
/// loop is unrolled for it).
template <class Scalar, std::size_t Lanes>
class lane_adjoints {
    static_assert(Lanes >= 1 && Lanes <= 64, "tapeflow::lane_adjoints: Lanes must be 1 to 64 (8 is a good start)");

public:
    using scalar_type = Scalar;
    using real_type = basic_real<Scalar>;
    using tape_type = basic_tape<Scalar>;
    static constexpr std::size_t lanes = Lanes;

    /// Adjoints (all 0) for the variables of `tape`; only that tape sweeps them.
    explicit lane_adjoints(const tape_type& tape) : tape_(&tape) {}
    lane_adjoints(const lane_adjoints& other) : tape_(other.tape_), swept_epoch_(other.swept_epoch_) {
        grow(other.size_ / Lanes);
        for (std::size_t i = 0; i < size_; ++i) values_[i] = other.values_[i];
    }
    // The buffer moves (values_ stays in it); `other` is left empty, not
    // pointing into the buffer it no longer owns.
    lane_adjoints(lane_adjoints&& other) noexcept
        : tape_(other.tape_),
          storage_(std::move(other.storage_)),
          values_(other.values_),
          size_(other.size_),
          swept_epoch_(other.swept_epoch_) {
        other.storage_.clear();
        other.values_ = nullptr;
        other.size_ = 0;
        other.swept_epoch_ = 0;
    }
    lane_adjoints& operator=(lane_adjoints other) noexcept {
        tape_ = other.tape_;
        storage_.swap(other.storage_);
        std::swap(values_, other.values_);
        std::swap(size_, other.size_);
        std::swap(swept_epoch_, other.swept_epoch_);
        return *this;
    }

    /// Sets the adjoint of `y` in `lane` (the seed of the output that lane differentiates).
    /// \throws usage_error if `lane >= Lanes`, `y` is passive or of another
    /// tape, or while the tape sweeps.
    void set(const real_type& y, std::size_t lane, Scalar value) { at(y, lane, "set") = value; }
    /// Adds to the adjoint of `y` in `lane`; throws as set().
    void add(const real_type& y, std::size_t lane, Scalar value) { at(y, lane, "add") += value; }

    /// The adjoint of `x` in `lane`; 0 for a passive `x`.
    /// \throws usage_error if `lane >= Lanes` or `x` belongs to another tape.
    Scalar get(const real_type& x, std::size_t lane) const {
        check_lane(lane, "get");
        check_ours(x, "get");
        return value(x.id(), lane);
    }
    /// Every lane of the adjoint of `x`.
    std::array<Scalar, Lanes> get(const real_type& x) const {
        check_ours(x, "get");
        std::array<Scalar, Lanes> a{};
        for (std::size_t l = 0; l < Lanes; ++l) a[l] = value(x.id(), l);
        return a;
    }
    /// The adjoint of identifier `id` in `lane` (0 for one never seeded nor swept).
    /// \throws usage_error if `lane >= Lanes` (it would read another
    /// identifier's row).
    Scalar get(identifier id, std::size_t lane) const {
        check_lane(lane, "get");
        return value(id, lane);
    }

    /// Sets every adjoint of every lane to 0 (keeps the memory). Needed
    /// before seeding again after the tape was reset: a sweep refuses lane
    /// adjoints that it swept before the tape's last reset.
    void clear() noexcept {
        for (std::size_t i = 0; i < size_; ++i) values_[i] = Scalar(0);
        swept_epoch_ = 0;
    }

    const tape_type& tape() const noexcept { return *tape_; }
    /// Bytes held (Lanes scalars per identifier, and up to a cache line of alignment).
    std::size_t bytes() const noexcept { return storage_.capacity() * sizeof(Scalar); }

private:
    friend tape_type;

    // Rows start on a cache line (a row of 8 doubles is one line): a row
    // split over two lines makes every access of the sweep two.
    static constexpr std::size_t line = 64;

    // Rows for identifiers 0 .. count - 1 (the sweep calls it before it starts).
    void grow(std::size_t count) {
        const std::size_t size = count * Lanes;
        if (size_ >= size) return;
        std::vector<Scalar> storage(size + line / sizeof(Scalar), Scalar(0));
        void* at = storage.data();
        std::size_t room = storage.size() * sizeof(Scalar);
        Scalar* values = static_cast<Scalar*>(std::align(line, size * sizeof(Scalar), at, room));
        for (std::size_t i = 0; i < size_; ++i) values[i] = values_[i];
        storage_.swap(storage);
        values_ = values;
        size_ = size;
    }
    Scalar* data() noexcept { return values_; }
    // get() after its checks
    Scalar value(identifier id, std::size_t lane) const noexcept {
        const std::size_t i = std::size_t(id) * Lanes + lane;
        return i < size_ ? values_[i] : Scalar(0);
    }

    Scalar& at(const real_type& y, std::size_t lane, const char* what) {
        check_lane(lane, what);
        check_ours(y, what);
        if (tape_->is_sweeping())
            throw usage_error(std::string("lane_adjoints::") + what +
                              "() called while the tape sweeps these adjoints (from a reverse rule?); seed "
                              "them before sweep() or after it returns");
        if (y.id() == 0)
            throw usage_error(std::string("lane_adjoints::") + what +
                              "() on a passive variable; call register_output() on it first");
        grow(std::size_t(y.id()) + 1);
        return values_[std::size_t(y.id()) * Lanes + lane];
    }
    void check_lane(std::size_t lane, const char* what) const {
        if (lane >= Lanes)
            throw usage_error(std::string("lane_adjoints::") + what + "(): lane " + std::to_string(lane) +
                              " is out of range; these adjoints have " + std::to_string(Lanes) +
                              " lanes (0 to " + std::to_string(Lanes - 1) + ")");
    }
    void check_ours(const real_type& x, const char* what) const {
        if (x.id() != 0 && x.tape_tag() != tape_->serial())
            throw usage_error(std::string("lane_adjoints::") + what +
                              "(): the variable belongs to another tape than these adjoints (or to a tape "
                              "that no longer exists); make lane_adjoints of the tape that recorded it");
    }

    const tape_type* tape_;
    std::vector<Scalar> storage_;  // values_ and the padding that aligns it
    Scalar* values_ = nullptr;     // values_[id * Lanes + lane], size_ of them
    std::size_t size_ = 0;
    std::uint64_t swept_epoch_ = 0;  // the tape's reset count at the last sweep of these; 0: none since clear()
};

}  // namespace tapeflow
