// The README's quick start: the gradient of a function templated on its number type.
#include <tapeflow/tapeflow.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

template <class T>
T energy(const std::vector<T>& x) {  // written once, for double and for Real
    T e = 0.0;
    for (std::size_t i = 0; i + 1 < x.size(); ++i)
        e += std::sin(x[i]) * x[i + 1] + 0.5 * std::pow(x[i + 1] - x[i], 2);
    return e;
}

int main() {
    const std::vector<double> x{0.5, 1.0, 1.5, 2.0};
    auto [e, g] = tapeflow::value_and_gradient([](const auto& v) { return energy(v); }, x);
    std::printf("energy = %.6f\n", e);
    for (std::size_t i = 0; i < g.size(); ++i) std::printf("de/dx%zu = %+.6f\n", i, g[i]);
    const auto s = tapeflow::tape::active().statistics();
    std::printf("tape: %llu statements, %.1f bytes each\n",
                static_cast<unsigned long long>(s.statements), s.bytes_per_statement());
}
