// A statement nested deeper than tapeflow::max_expression_depth (800) is a
// clear static_assert, not the compiler's template-depth error (a sum of
// 1000 terms written out is 999 deep). The control sums in a loop.
#include <tapeflow/tapeflow.hpp>

#include <utility>
#include <vector>

namespace {
template <std::size_t... I>
tapeflow::Real sum(const std::vector<tapeflow::Real>& x, std::index_sequence<I...>) {
#ifdef TAPEFLOW_CONTROL
    tapeflow::Real s = 0.0;
    for (std::size_t i = 0; i < sizeof...(I); ++i) s += x[i];
    return s;
#else
    return (x[I] + ...);
#endif
}
}  // namespace

double deep(const std::vector<tapeflow::Real>& x) {
    return sum(x, std::make_index_sequence<1000>{}).value();
}
