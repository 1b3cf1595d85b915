// tapeflow/tape/sweeper.hpp - the reverse sweep over one run of records.
//
// For each record from the last to the first (tape/record.hpp):
//
//   a = adjoint[lhs];  adjoint[lhs] = 0  (not for an update record, lhs += ...);
//   if a != 0:  adjoint[id_i] += partial_i * a   for every pair i
//
// A record whose lhs adjoint is 0 adds nothing and is stepped over. An
// external entry (a custom adjoint) has lhs 0, so the sweep meets it on that
// rarely taken branch and runs its reverse rule (tape/external.hpp).
//
// basic_tape walks the tiles (the stream, the observer, progress) and hands
// each tile's run of records to these functions. swept_identifiers names what
// a sweep of a run can have left non-zero, for the tape to zero it again
// (tape/adjoint_store.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "../config.hpp"
#include "external.hpp"
#include "record.hpp"
#include "scalar.hpp"

namespace tapeflow::detail {

// One record of K pairs (a short record, K a constant): steps the reader
// to it and propagates its lhs adjoint, the pairs unrolled.
template <std::uint32_t K, class Scalar>
TAPEFLOW_ALWAYS_INLINE void sweep_short_record(reverse_record_reader<Scalar>& r, record_header h,
                                               Scalar* adjoint) noexcept {
    r.template step<K>();
    const Scalar a = adjoint[h.lhs];
    if (!h.update) adjoint[h.lhs] = Scalar(0);
    if (is_zero(a)) return;
#pragma GCC unroll 16
    for (std::uint32_t i = 0; i < K; ++i) adjoint[r.id(i)] += r.partial(i) * a;
}

/// Sweeps the records of [begin, end) with one adjoint per identifier.
///
/// A short record (1-15 pairs, nearly all of them) takes a case of its own:
/// each case steps back by its constant size, so the next header's address
/// does not wait on this header's load (the CPU follows the predicted case
/// and runs ahead); a step of size(k) with the k just loaded made every
/// record wait for the one after it. Long records and external entries
/// take the general path.
template <class Scalar>
void sweep_records(const std::byte* begin, const std::byte* end, Scalar* adjoint,
                   external_table<Scalar>& externals) {
    static_assert(record_layout<Scalar>::long_count == 16, "one case per short record's count below");
    reverse_record_reader<Scalar> r(begin, end);
    while (r.more()) {
        detail::prefetch_tape<false>(r.record(), -std::ptrdiff_t(tape_prefetch_bytes));  // config.hpp says why
        const record_header s = r.peek_short();
        switch (s.count) {
            case 1: sweep_short_record<1>(r, s, adjoint); continue;
            case 2: sweep_short_record<2>(r, s, adjoint); continue;
            case 3: sweep_short_record<3>(r, s, adjoint); continue;
            case 4: sweep_short_record<4>(r, s, adjoint); continue;
            case 5: sweep_short_record<5>(r, s, adjoint); continue;
            case 6: sweep_short_record<6>(r, s, adjoint); continue;
            case 7: sweep_short_record<7>(r, s, adjoint); continue;
            case 8: sweep_short_record<8>(r, s, adjoint); continue;
            case 9: sweep_short_record<9>(r, s, adjoint); continue;
            case 10: sweep_short_record<10>(r, s, adjoint); continue;
            case 11: sweep_short_record<11>(r, s, adjoint); continue;
            case 12: sweep_short_record<12>(r, s, adjoint); continue;
            case 13: sweep_short_record<13>(r, s, adjoint); continue;
            case 14: sweep_short_record<14>(r, s, adjoint); continue;
            case 15: sweep_short_record<15>(r, s, adjoint); continue;
            default: break;  // a long record or an external entry
        }
        // The general path repeats sweep_short_record's body with a run-time
        // count. One helper for both (count a std::integral_constant there)
        // gave the same instructions in another order and sweeps 3-7%
        // slower on gmm, lstm, mlp and nbody in three A/Bs (session 34), so
        // the two stay apart.
        const record_header h = r.previous();
        const Scalar a = adjoint[h.lhs];
        if (!h.update) adjoint[h.lhs] = Scalar(0);
        if (is_zero(a)) {
            // external entries have lhs 0, whose adjoint is always 0
            if (TAPEFLOW_UNLIKELY(h.count == 0)) externals.reverse(r.take_external(), adjoint);
            continue;
        }
        for (std::uint32_t i = 0; i < h.count; ++i) adjoint[r.id(i)] += r.partial(i) * a;
    }
}

/// sweep_records for one thread's part of a parallel region swept beside
/// the other threads' parts, without atomics: the adds go to the thread's
/// own adjoint vector `mine` (all 0 on entry), and every identifier whose
/// entry there may have become non-zero is appended to `touched`, for the
/// caller to add `mine` into `adjoint` after every thread finished. A
/// record's lhs adjoint is adjoint[lhs] (from the records after the region,
/// which no thread writes during the sweep) plus mine[lhs] (from this
/// thread's later records). No external entries (the region sweeps parts
/// that hold some one after another, with sweep_records).
template <class Scalar>
void sweep_records_private(const std::byte* begin, const std::byte* end, Scalar* adjoint, Scalar* mine,
                           std::vector<identifier>& touched) {
    reverse_record_reader<Scalar> r(begin, end);
    while (r.more()) {
        detail::prefetch_tape<false>(r.record(), -std::ptrdiff_t(tape_prefetch_bytes));  // config.hpp says why
        const record_header h = r.previous();
        const Scalar a = adjoint[h.lhs] + mine[h.lhs];
        if (!h.update) {  // an update leaves both parts of the lhs adjoint as they are
            adjoint[h.lhs] = Scalar(0);
            mine[h.lhs] = Scalar(0);
        }
        if (is_zero(a)) continue;
        for (std::uint32_t i = 0; i < h.count; ++i) {
            Scalar& m = mine[r.id(i)];
            if (is_zero(m)) touched.push_back(r.id(i));
            m += r.partial(i) * a;
        }
    }
}

/// Calls f(id) for every identifier whose adjoint sweep_records can leave
/// non-zero on these records: the operands (it writes only 0 to the lhs of
/// an assignment, and nothing to that of an update, whose adjoint is then
/// non-zero only as a seed or as an operand of a later record).
/// Not the adjoints an external entry's rule writes: they are not in the
/// records (external entries are stepped over).
template <class Scalar, class F>
void swept_identifiers(const std::byte* begin, const std::byte* end, F&& f) {
    reverse_record_reader<Scalar> r(begin, end);
    while (r.more()) {
        const record_header h = r.previous();
        if (h.count == 0) r.take_external();
        for (std::uint32_t i = 0; i < h.count; ++i) f(r.id(i));
    }
}

/// Appends to `out` the lhs of every assignment record of [begin, end) and
/// what its external entries assign (not the lhs of an update: it keeps
/// the value it had, plus what the update added). Returns false when an
/// entry cannot tell (external_entry::assigned_identifiers).
template <class Scalar>
bool assigned_identifiers(const std::byte* begin, const std::byte* end, const external_table<Scalar>& externals,
                          std::vector<identifier>& out) {
    reverse_record_reader<Scalar> r(begin, end);
    bool told = true;
    while (r.more()) {
        const record_header h = r.previous();
        if (h.count == 0)
            told = externals.assigned_identifiers(r.take_external(), out) && told;
        else if (!h.update)
            out.push_back(h.lhs);
    }
    return told;
}

// Whether a lane of `a` is not 0 (NaN counts, -0 does not), without a
// branch per lane: the bits of every lane but their sign, ORed (a few
// vector instructions; comparing lane by lane compiles to a branch each).
template <std::size_t Lanes, class Scalar>
TAPEFLOW_ALWAYS_INLINE bool any_nonzero(const Scalar* a) noexcept {
    if constexpr (std::is_floating_point_v<Scalar> && (sizeof(Scalar) == 8 || sizeof(Scalar) == 4)) {
        using bits_type = std::conditional_t<sizeof(Scalar) == 8, std::uint64_t, std::uint32_t>;
        constexpr bits_type magnitude = ~bits_type(0) >> 1;
        bits_type bits[Lanes];
        std::memcpy(bits, a, sizeof bits);
        bits_type any = 0;
        for (std::size_t l = 0; l < Lanes; ++l) any |= bits[l] & magnitude;
        return any != 0;
    } else {
        bool any = false;
        for (std::size_t l = 0; l < Lanes; ++l) any |= !is_zero(a[l]);
        return any;
    }
}

// add_lanes for a partial of inf or NaN: only the lanes whose a[l] is not
// 0 (0 * inf would make a NaN). Out of line: inlined, its lane by lane
// tests made the compiler take the lanes of `a` apart on every record.
template <std::size_t Lanes, class Scalar>
TAPEFLOW_COLD void add_lanes_masked(Scalar* target, Scalar p, const Scalar* a) noexcept {
    for (std::size_t l = 0; l < Lanes; ++l)
        if (!is_zero(a[l])) target[l] += p * a[l];
}

// target[l] += p * a[l] for the lanes whose a[l] is not 0.
template <std::size_t Lanes, class Scalar>
TAPEFLOW_ALWAYS_INLINE void add_lanes(Scalar* target, Scalar p, const Scalar* a) noexcept {
    if (TAPEFLOW_LIKELY(is_finite(p))) {  // p * 0 adds nothing
        for (std::size_t l = 0; l < Lanes; ++l) target[l] += p * a[l];
    } else {
        add_lanes_masked<Lanes>(target, p, a);
    }
}

// One short record of K pairs in the vector sweep (as sweep_short_record).
template <std::uint32_t K, std::size_t Lanes, class Scalar>
TAPEFLOW_ALWAYS_INLINE void sweep_short_lane_record(reverse_record_reader<Scalar>& r, record_header h,
                                                    Scalar* adjoint) noexcept {
    r.template step<K>();
    Scalar* const row = adjoint + std::size_t(h.lhs) * Lanes;
    Scalar a[Lanes];
    for (std::size_t l = 0; l < Lanes; ++l) a[l] = row[l];
    // (a row of zeros is left as it is, as the scalar sweep's store of 0
    // would leave it, but for the sign of a -0)
    if (!any_nonzero<Lanes>(a)) return;
    if (!h.update)
        for (std::size_t l = 0; l < Lanes; ++l) row[l] = Scalar(0);
    for (std::uint32_t i = 0; i < K; ++i) add_lanes<Lanes>(adjoint + std::size_t(r.id(i)) * Lanes, r.partial(i), a);
}

/// The vector sweep: sweep_records with Lanes adjoints per identifier
/// (tape/lane_adjoints.hpp). Lane l does what a scalar sweep does: a lane
/// whose lhs adjoint is 0 adds nothing. With a finite partial, adding
/// partial * 0 = +-0 changes no adjoint, so the loop over the lanes has no
/// branch (it vectorizes); a partial of inf or NaN (at a non-differentiable
/// point) takes the masked loop, where 0 * inf would have made a NaN.
/// Records of 1-4 pairs take a case each, stepping back by a constant (as
/// in sweep_records); a pair here costs Lanes multiply-adds, so the chain
/// of header loads matters less, and cases up to 15 made 16 lanes about
/// 12% slower (more code) for nothing on 4 and 8 (docs/performance.md).
template <std::size_t Lanes, class Scalar>
void sweep_lane_records(const std::byte* begin, const std::byte* end, Scalar* adjoint,
                        external_table<Scalar>& externals) {
    reverse_record_reader<Scalar> r(begin, end);
    while (r.more()) {
        detail::prefetch_tape<false>(r.record(), -std::ptrdiff_t(tape_prefetch_bytes));  // config.hpp says why
        const record_header s = r.peek_short();
        switch (s.count) {
            case 1: sweep_short_lane_record<1, Lanes>(r, s, adjoint); continue;
            case 2: sweep_short_lane_record<2, Lanes>(r, s, adjoint); continue;
            case 3: sweep_short_lane_record<3, Lanes>(r, s, adjoint); continue;
            case 4: sweep_short_lane_record<4, Lanes>(r, s, adjoint); continue;
            default: break;  // 5 pairs or more, or an external entry
        }
        // (as in sweep_records, the short records' body again, run-time count)
        const record_header h = r.previous();
        Scalar* const row = adjoint + std::size_t(h.lhs) * Lanes;
        Scalar a[Lanes];
        for (std::size_t l = 0; l < Lanes; ++l) a[l] = row[l];
        if (!any_nonzero<Lanes>(a)) {
            // external entries have lhs 0, whose row is always 0
            if (TAPEFLOW_UNLIKELY(h.count == 0)) externals.reverse_lanes(r.take_external(), adjoint, Lanes);
            continue;
        }
        if (!h.update)
            for (std::size_t l = 0; l < Lanes; ++l) row[l] = Scalar(0);
        for (std::uint32_t i = 0; i < h.count; ++i)
            add_lanes<Lanes>(adjoint + std::size_t(r.id(i)) * Lanes, r.partial(i), a);
    }
}

/// sweep_lane_records with the number of lanes known at run time only (an
/// external entry's reverse_lanes: a parallel region's entry).
template <class Scalar>
void sweep_lane_records_n(const std::byte* begin, const std::byte* end, Scalar* adjoint, std::size_t lanes,
                          external_table<Scalar>& externals) {
    reverse_record_reader<Scalar> r(begin, end);
    while (r.more()) {
        const record_header h = r.previous();
        if (h.count == 0) {
            externals.reverse_lanes(r.take_external(), adjoint, lanes);
            continue;
        }
        Scalar* const row = adjoint + std::size_t(h.lhs) * lanes;
        for (std::size_t l = 0; l < lanes; ++l) {
            const Scalar a = row[l];
            if (is_zero(a)) continue;
            if (!h.update) row[l] = Scalar(0);
            for (std::uint32_t i = 0; i < h.count; ++i) adjoint[std::size_t(r.id(i)) * lanes + l] += r.partial(i) * a;
        }
    }
}

}  // namespace tapeflow::detail
