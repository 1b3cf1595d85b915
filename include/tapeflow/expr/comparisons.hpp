// tapeflow/expr/comparisons.hpp - comparisons, classification and printing.
//
// These look only at values and record nothing: a branch on a comparison
// records the path taken (the gradient is that of the branch executed).
// (A tree deeper than max_expression_depth has recorded its parts as it was
// built, before it reaches a comparison: see split_operand in nodes.hpp.)
#pragma once

#include <cmath>
#include <ostream>

#include "expression.hpp"
#include "mode.hpp"
#include "std_math.hpp"

namespace tapeflow {
namespace detail {
template <class A, class B>
constexpr void check_same_scalar() {
    check_same_mode<A, B>();
    static_assert(same_scalar_v<scalar_of_t<A, B>, A, B>,
                  "tapeflow: comparing operands of different scalar types; convert one explicitly");
}
}  // namespace detail

template <class A, class B, detail::enable_t<A, B> = 0>
constexpr bool operator==(const A& a, const B& b) { detail::check_same_scalar<A, B>(); return detail::value_of(a) == detail::value_of(b); }
template <class A, class B, detail::enable_t<A, B> = 0>
constexpr bool operator!=(const A& a, const B& b) { detail::check_same_scalar<A, B>(); return detail::value_of(a) != detail::value_of(b); }
template <class A, class B, detail::enable_t<A, B> = 0>
constexpr bool operator<(const A& a, const B& b) { detail::check_same_scalar<A, B>(); return detail::value_of(a) < detail::value_of(b); }
template <class A, class B, detail::enable_t<A, B> = 0>
constexpr bool operator<=(const A& a, const B& b) { detail::check_same_scalar<A, B>(); return detail::value_of(a) <= detail::value_of(b); }
template <class A, class B, detail::enable_t<A, B> = 0>
constexpr bool operator>(const A& a, const B& b) { detail::check_same_scalar<A, B>(); return detail::value_of(a) > detail::value_of(b); }
template <class A, class B, detail::enable_t<A, B> = 0>
constexpr bool operator>=(const A& a, const B& b) { detail::check_same_scalar<A, B>(); return detail::value_of(a) >= detail::value_of(b); }

template <class E, detail::enable_t<E> = 0>
bool isnan(const E& x) { return std::isnan(detail::innermost_value(x)); }
template <class E, detail::enable_t<E> = 0>
bool isinf(const E& x) { return std::isinf(detail::innermost_value(x)); }
template <class E, detail::enable_t<E> = 0>
bool isfinite(const E& x) { return std::isfinite(detail::innermost_value(x)); }
template <class E, detail::enable_t<E> = 0>
bool isnormal(const E& x) { return std::isnormal(detail::innermost_value(x)); }
template <class E, detail::enable_t<E> = 0>
bool signbit(const E& x) { return std::signbit(detail::innermost_value(x)); }

/// Prints the value, formatted like the scalar type.
template <class E, detail::enable_t<E> = 0>
std::ostream& operator<<(std::ostream& out, const E& x) { return out << x.value(); }

}  // namespace tapeflow
