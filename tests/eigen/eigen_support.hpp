// tests/eigen/eigen_support.hpp - recording helpers shared by the Eigen tests.
//
// A test function is a generic lambda f(const std::vector<T>& x) -> T that
// builds its matrices from x. Called with T = tapeflow::Real it is recorded
// and swept (record()); called with T = double it is the plain Eigen
// computation that the central differences use. Include the tapeflow Eigen
// header under test BEFORE this file: its specializations must be seen
// before Eigen instantiates anything.
#pragma once

#include <catch2/catch.hpp>
#include <tapeflow/eigen/num_traits.hpp>

#include "support/finite_difference.hpp"
#include "support/options.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

/// The number type of a std::vector<T> argument `x` of a generic lambda.
#define SCALAR_OF(x) typename std::decay_t<decltype(x)>::value_type

namespace eigen_test {

using tapeflow::Real;
using Eigen::Index;

template <class T>
using MatrixX = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class T>
using RowMajorX = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class T>
using VectorX = Eigen::Matrix<T, Eigen::Dynamic, 1>;
template <class T>
using RowVectorX = Eigen::Matrix<T, 1, Eigen::Dynamic>;

/// n numbers uniform in [lo, hi); the same for the same seed.
inline std::vector<double> uniform(std::size_t n, unsigned seed, double lo = -1.0, double hi = 1.0) {
    std::mt19937 engine(seed);
    std::uniform_real_distribution<double> dist(lo, hi);
    std::vector<double> v(n);
    for (double& e : v) e = dist(engine);
    return v;
}

/// Appends the elements of m (column by column) to v.
template <class M>
void append(std::vector<double>& v, const Eigen::MatrixBase<M>& m) {
    for (Index j = 0; j < m.cols(); ++j)
        for (Index i = 0; i < m.rows(); ++i) v.push_back(m(i, j));
}

/// A rows x cols matrix of type M filled column by column from x[at...];
/// advances at. For T = Real each element is a copy (one record) of an input.
template <class M, class T>
M take(const std::vector<T>& x, std::size_t& at, Index rows, Index cols) {
    M m;
    m.resize(rows, cols);
    for (Index j = 0; j < cols; ++j)
        for (Index i = 0; i < rows; ++i) m(i, j) = x.at(at++);
    return m;
}

/// A double matrix of uniform numbers in [-1, 1).
inline MatrixX<double> random_matrix(Index rows, Index cols, unsigned seed) {
    const std::vector<double> v = uniform(std::size_t(rows * cols), seed);
    return Eigen::Map<const MatrixX<double>>(v.data(), rows, cols);
}

/// sum_ij w_ij sin(m_ij) with fixed weights w_ij in [1, 2.5]: a nonlinear
/// scalar function of every element, taped one record per element.
/// d/dm_ij = w_ij cos(m_ij).
template <class M>
typename M::Scalar phi(const Eigen::MatrixBase<M>& m) {
    using std::sin;
    typename M::Scalar s = 0.0;
    for (Index j = 0; j < m.cols(); ++j)
        for (Index i = 0; i < m.rows(); ++i) s += (1.0 + 0.25 * double((3 * i + 5 * j) % 7)) * sin(m(i, j));
    return s;
}

/// What one recording gives.
struct taped {
    double value = 0;
    std::vector<double> gradient;
    tapeflow::tape_statistics statistics;  ///< after recording, before the sweep
};

/// Records f(x) on `tape` (x registered as inputs), sweeps it with the
/// output adjoint 1 and returns the value and the gradient.
template <class F>
taped record(tapeflow::tape& tape, const std::vector<double>& x, F&& f) {
    tape.reset();
    std::vector<Real> in(x.begin(), x.end());
    Real y;
    tape.start_recording();
    try {
        for (Real& v : in) tape.register_input(v);
        y = f(std::as_const(in));
        tape.register_output(y);
    } catch (...) {
        tape.stop_recording();
        tape.reset();
        throw;
    }
    tape.stop_recording();
    taped r;
    r.value = y.value();
    r.statistics = tape.statistics();
    tape.set_adjoint(y, 1.0);
    tape.sweep();
    r.gradient.resize(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) r.gradient[i] = tape.adjoint(in[i]);
    return r;
}

inline double max_abs(const std::vector<double>& v) {
    double m = 0;
    for (double e : v) m = std::max(m, std::fabs(e));
    return m;
}

/// Counts the components of `got` that differ from `want` by more than
/// rel * max(|got_i|, |want_i|) + rel * max_j |want_j| (the second term
/// covers components that cancel to about 0); describes the first few.
inline std::size_t mismatches(const std::vector<double>& got, const std::vector<double>& want, double rel,
                              std::string& report) {
    if (got.size() != want.size()) {
        report = "sizes differ: " + std::to_string(got.size()) + " vs " + std::to_string(want.size());
        return std::max(got.size(), want.size());
    }
    const double floor = rel * max_abs(want);
    std::size_t bad = 0;
    std::ostringstream out;
    out.precision(17);
    for (std::size_t i = 0; i < got.size(); ++i) {
        if (tapeflow_test::close(got[i], want[i], rel, floor)) continue;
        if (++bad <= 5) out << "component " << i << ": " << got[i] << " vs " << want[i] << "\n";
    }
    report = out.str();
    return bad;
}

/// Every component of `got` equals `want` to `rel` (see mismatches()).
#define EIGEN_TEST_CHECK_GRADIENTS(got, want, rel)                                                  \
    do {                                                                                            \
        std::string eigen_test_report_;                                                             \
        const std::size_t eigen_test_bad_ = ::eigen_test::mismatches((got), (want), (rel),          \
                                                                     eigen_test_report_);           \
        INFO(eigen_test_report_);                                                                   \
        CHECK(eigen_test_bad_ == 0);                                                                \
    } while (false)

/// The components a finite-difference check looks at: all of them up to
/// `most`, else `most` of them evenly spread, the last one included.
inline std::vector<std::size_t> sample(std::size_t n, std::size_t most) {
    std::vector<std::size_t> c;
    if (n <= most) {
        for (std::size_t i = 0; i < n; ++i) c.push_back(i);
        return c;
    }
    for (std::size_t k = 0; k < most; ++k) c.push_back(k * (n - 1) / (most - 1));
    return c;
}

/// Central differences of the double function f at x agree with the taped
/// gradient g to `rel` (relative to the component and to max |g|).
template <class F>
void check_finite_differences(F&& f, const std::vector<double>& x, const std::vector<double>& g,
                              std::size_t most = 40, double rel = 1e-6) {
    REQUIRE(g.size() == x.size());
    const double floor = rel * std::max(1.0, max_abs(g));
    std::size_t bad = 0;
    std::ostringstream out;
    out.precision(12);
    std::vector<double> xi = x;
    for (std::size_t i : sample(x.size(), most)) {
        const double fd = tapeflow_test::central_difference(
            [&](double v) {
                xi[i] = v;
                const double r = f(std::as_const(xi));
                xi[i] = x[i];
                return r;
            },
            x[i]);
        if (tapeflow_test::close(g[i], fd, rel, floor)) continue;
        if (++bad <= 5) out << "component " << i << ": tape " << g[i] << ", finite difference " << fd << "\n";
    }
    INFO(out.str());
    CHECK(bad == 0);
}

/// Records the generic f on Real and checks it against f on double: the
/// value to 1e-12 and the gradient against central differences.
template <class F>
taped check_gradient(F&& f, const std::vector<double>& x, std::size_t most = 40) {
    tapeflow::tape tape;
    taped r = record(tape, x, f);
    const double plain = f(x);
    INFO("taped value " << r.value << ", plain value " << plain);
    CHECK(tapeflow_test::close(r.value, plain, 1e-12, 1e-14));
    check_finite_differences(f, x, r.gradient, most);
    return r;
}

/// The options of a streaming tape that spills: 1 KiB tiles, a budget of two
/// tiles (everything beyond the scratchpad goes to the spill file).
inline tapeflow::tape_options spilling_options() {
    return tapeflow_test::tape_options(1024, true, 2 * 1024);
}

/// f recorded on a spilling streaming tape gives bit for bit the value and
/// gradient it gives on the default tape.
template <class F>
void check_streaming_identical(const std::vector<double>& x, F&& f) {
    tapeflow::tape reference;
    const taped want = record(reference, x, f);
    tapeflow::tape streaming(spilling_options());
    const taped got = record(streaming, x, f);
    INFO(got.statistics);
    CHECK(got.statistics.tiles_spilled > 0);
    CHECK(got.statistics.externals == want.statistics.externals);
    CHECK(got.value == want.value);
    std::size_t differ = 0;
    for (std::size_t i = 0; i < want.gradient.size(); ++i) differ += got.gradient[i] != want.gradient[i];
    CHECK(got.gradient.size() == want.gradient.size());
    CHECK(differ == 0);
}

}  // namespace eigen_test
