// tapeflow/numeric_limits.hpp - the members of std::numeric_limits for an
// active type (basic_real, basic_dual): those of its scalar type, with the
// constants returned as passive values of the active type. std.hpp and
// dual.hpp derive their std::numeric_limits specializations from it.
#pragma once

#include <limits>

namespace tapeflow {
namespace detail {

template <class Active, class S>
struct active_numeric_limits {
    using base = std::numeric_limits<S>;
    using real = Active;

    static constexpr bool is_specialized = true;
    static constexpr bool is_signed = base::is_signed;
    static constexpr bool is_integer = false;
    static constexpr bool is_exact = false;
    static constexpr bool has_infinity = base::has_infinity;
    static constexpr bool has_quiet_NaN = base::has_quiet_NaN;
    static constexpr bool has_signaling_NaN = base::has_signaling_NaN;
    static constexpr std::float_denorm_style has_denorm = base::has_denorm;
    static constexpr bool has_denorm_loss = base::has_denorm_loss;
    static constexpr std::float_round_style round_style = base::round_style;
    static constexpr bool is_iec559 = base::is_iec559;
    static constexpr bool is_bounded = base::is_bounded;
    static constexpr bool is_modulo = false;
    static constexpr int digits = base::digits;
    static constexpr int digits10 = base::digits10;
    static constexpr int max_digits10 = base::max_digits10;
    static constexpr int radix = base::radix;
    static constexpr int min_exponent = base::min_exponent;
    static constexpr int min_exponent10 = base::min_exponent10;
    static constexpr int max_exponent = base::max_exponent;
    static constexpr int max_exponent10 = base::max_exponent10;
    static constexpr bool traps = base::traps;
    static constexpr bool tinyness_before = base::tinyness_before;

    static constexpr real min() noexcept { return base::min(); }
    static constexpr real lowest() noexcept { return base::lowest(); }
    static constexpr real max() noexcept { return base::max(); }
    static constexpr real epsilon() noexcept { return base::epsilon(); }
    static constexpr real round_error() noexcept { return base::round_error(); }
    static constexpr real infinity() noexcept { return base::infinity(); }
    static constexpr real quiet_NaN() noexcept { return base::quiet_NaN(); }
    static constexpr real signaling_NaN() noexcept { return base::signaling_NaN(); }
    static constexpr real denorm_min() noexcept { return base::denorm_min(); }
};

}  // namespace detail
}  // namespace tapeflow
