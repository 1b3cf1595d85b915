// bench/harness/kernel.hpp - what a benchmark kernel provides.
//
// A kernel is a struct with
//
//   static constexpr const char* name;               // "heat", "gmm", ...
//   std::vector<double> inputs() const;              // the point x (deterministic)
//   template <class T> T operator()(const std::vector<T>& x) const;
//                                                    // f(x), written ONCE for every
//                                                    // number type: double, tapeflow::Real,
//                                                    // adouble (ADOL-C), Sacado::Rad::ADvar,
//                                                    // codi::RealReverse*, adept::aReal,
//                                                    // xad::AReal<double>
//   double adjoint(const std::vector<double>& x, std::vector<double>& g) const;
//                                                    // hand-written reverse mode:
//                                                    // returns f(x), writes grad f into g
//
// Kernels call math functions unqualified after `using std::exp;` etc., so
// that argument-dependent lookup finds each tool's overloads. A tool that
// cannot run a kernel is switched off by the kernel: `static constexpr bool
// <tool> = false` and a `<tool>_note` saying why, for <tool> = adolc, sacado,
// codipack, adept, xad (the default is that it runs).
#pragma once

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace bench {

/// n uniform numbers in [lo, hi), reproducible from `seed`.
inline std::vector<double> uniform(std::size_t n, double lo, double hi, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<double> v(n);
    for (auto& x : v) x = dist(rng);
    return v;
}

/// log(sum_j exp(v_j)), shifted by the largest v_j (picked by value; the
/// result and its gradient do not depend on the shift).
template <class T>
T logsumexp(const std::vector<T>& v) {
    using std::exp;
    using std::log;
    std::size_t top = 0;
    for (std::size_t j = 1; j < v.size(); ++j)
        if (v[j] > v[top]) top = j;
    T s = 0.0;
    for (std::size_t j = 0; j < v.size(); ++j) s += exp(v[j] - v[top]);
    T r = v[top] + log(s);
    return r;
}

}  // namespace bench
