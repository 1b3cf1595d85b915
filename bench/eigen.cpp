// bench/eigen.cpp - the Eigen integration (tapeflow/eigen.hpp): products and
// solves taped as ONE entry against the same code taped per scalar.
//
//   tapeflow_eigen_bench [--check-only] [--sizes=32,64,...] [--max-tape-gib=G]
//                        [--max-seconds=S] [Google Benchmark flags]
//
// Workloads, each for n = 32, 64, 128, 256, 512 (--sizes):
//   product        C = A B (A, B n x n), f = sum(C .* R), R fixed;
//                  gradient w.r.t. A and B
//   dense_layer    f = sum(tanh(W X + b 1^T)), W n x n, a batch X of n
//                  columns (fixed); gradient w.r.t. W and b
//   least_squares  x = argmin |A s - y| (A 2n x n), f = |x|^2;
//                  gradient w.r.t. A and y
//   poisson        -(k u')' = q on n cells of [0, 1], u = 0 at both ends,
//                  finite volumes with harmonic-mean face coefficients: a dense
//                  n x n system K(k) u = q assembled from Real and solved with
//                  LU (partial pivoting); f = |u|^2; gradient w.r.t. k
//
// Benchmarks are named <workload>/<n>/<variant>:
//   primal     f on double with Eigen's own kernels (A * B, partialPivLu(),
//              householderQr()): what the user runs without derivatives
//   one_entry  tapeflow gradient, products as one entry (ordinary Eigen
//              products of Real), tapeflow::householder_qr / partial_piv_lu
//              .solve and tapeflow::dot / squared_norm as one entry each
//   matrix_variable (product only) tapeflow gradient with A and B as
//              tapeflow::matrix_variable (eigen/matrix_variable.hpp): one
//              identifier range each, C = A B and dot(C, R) one entry each
//   scalar     tapeflow gradient, taped per scalar: A.lazyProduct(B) and
//              Eigen's own decompositions on Real matrices. Eigen's blocked
//              LU and QR and its triangular solves evaluate some blocks as
//              ordinary products, which products.hpp still tapes as one entry
//              each (counter `externals`); everything else is per scalar.
// A gradient is the whole job: tape.reset(), fresh inputs
// (tapeflow::register_inputs), record, seed, sweep, read every adjoint
// (tapeflow::adjoints). Counters: primal_ms (median measured in this
// process before the first iteration), gradient_over_primal, tape_bytes
// (statistics().record_bytes + external_bytes of one gradient), statements,
// externals, and inputs_ms / record_ms / sweep_ms / read_ms (CPU time per
// gradient in its phases: reset + fresh inputs, recording f, seed + sweep,
// reading the adjoints). A scalar variant whose tape, extrapolated from the
// two sizes below it (with the growth exponent measured between them), would
// exceed --max-tape-gib (2) GiB or whose time, extrapolated the same way,
// would exceed --max-seconds (4) s per gradient reports the error
// "skipped: ..." instead of running (printed at startup too).
//
// --check-only: for n = 16 and 40, every one-entry gradient must equal the
// scalar-taped one (relative 1e-9 of the largest component; the
// matrix-variable product's too) and match
// central finite differences along 3 random directions (1e-5); the one-entry
// paths must have taped external entries and the lazyProduct paths none.
// Exit code 1 on a mismatch. Also a ctest (bench:eigen_checks).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Dense>
#include <tapeflow/eigen.hpp>
#include <tapeflow/eigen/matrix_variable.hpp>

#include "harness/check.hpp"
#include "harness/timing.hpp"

namespace eigen_bench {
namespace {

using bench::median_seconds;
using bench::thread_cpu_seconds;

using tapeflow::Real;
template <class T>
using matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic>;
template <class T>
using vector = Eigen::Matrix<T, Eigen::Dynamic, 1>;
template <class T>
using matrix_view = Eigen::Map<const matrix<T>>;
template <class T>
using vector_view = Eigen::Map<const vector<T>>;

enum class path { one_entry, scalar, matrix_variable };

matrix<double> random_matrix(std::size_t rows, std::size_t cols, double lo, double hi, std::uint64_t seed) {
    const std::vector<double> v = bench::uniform(rows * cols, lo, hi, seed);
    return matrix_view<double>(v.data(), Eigen::Index(rows), Eigen::Index(cols));
}

// ---- workloads --------------------------------------------------------------
//
// The inputs of a workload are Eigen matrices (`blocks`), as user code holds
// them; the point x is their elements in order, each column-major. Each
// workload has: name, shapes() of its blocks, inputs() (x), evaluate<T>(in,
// path) (f; the path only matters for T = Real), and operator()(x) on
// doubles for the finite differences of harness/check.hpp.

using shape_list = std::vector<std::pair<Eigen::Index, Eigen::Index>>;
template <class T>
using blocks = std::vector<matrix<T>>;

std::size_t total_size(const shape_list& shapes) {
    std::size_t size = 0;
    for (const auto& [rows, cols] : shapes) size += std::size_t(rows * cols);
    return size;
}

blocks<double> split(const shape_list& shapes, const std::vector<double>& x) {
    blocks<double> in;
    std::size_t at = 0;
    for (const auto& [rows, cols] : shapes) {
        in.push_back(matrix_view<double>(x.data() + at, rows, cols));
        at += std::size_t(rows * cols);
    }
    return in;
}

struct product {
    static constexpr const char* name = "product";
    Eigen::Index n;
    matrix<double> r;  // f = sum(C .* R)
    explicit product(Eigen::Index n_) : n(n_), r(random_matrix(n, n, -1.0, 1.0, 11)) {}

    shape_list shapes() const { return {{n, n}, {n, n}}; }  // A, B
    std::vector<double> inputs() const { return bench::uniform(total_size(shapes()), -1.0, 1.0, 12); }

    template <class T>
    T evaluate(const blocks<T>& in, path how) const {
        const matrix<T>& a = in[0];
        const matrix<T>& b = in[1];
        if constexpr (std::is_same_v<T, double>) {
            matrix<double> c;
            c.noalias() = a * b;
            return (c.array() * r.array()).sum();
        } else if (how == path::one_entry) {
            const matrix<Real> c = a * b;
            return tapeflow::dot(c, r);
        } else {
            const matrix<Real> c = a.lazyProduct(b);
            return (c.array() * r.array()).sum();
        }
    }
    // the same f with A and B as matrix variables
    Real evaluate_variables(const std::vector<tapeflow::matrix_variable>& in) const {
        const tapeflow::matrix_variable c = in[0] * in[1];
        return tapeflow::dot(c, r);
    }
    double operator()(const std::vector<double>& x) const { return evaluate(split(shapes(), x), path::one_entry); }
};

// whether workload W has a matrix-variable path (evaluate_variables)
template <class W, class = void>
struct has_variables : std::false_type {};
template <class W>
struct has_variables<W, std::void_t<decltype(std::declval<const W&>().evaluate_variables(
                            std::declval<const std::vector<tapeflow::matrix_variable>&>()))>> : std::true_type {};

struct dense_layer {
    static constexpr const char* name = "dense_layer";
    Eigen::Index n;
    matrix<double> batch;  // X: n features x n samples
    explicit dense_layer(Eigen::Index n_) : n(n_), batch(random_matrix(n, n, -1.0, 1.0, 21)) {}

    shape_list shapes() const { return {{n, n}, {n, 1}}; }  // W, b
    std::vector<double> inputs() const {  // W scaled by 1/sqrt(n), so tanh stays curved
        const double s = 1.0 / std::sqrt(double(n));
        std::vector<double> x = bench::uniform(std::size_t(n * n), -s, s, 22);
        const std::vector<double> b = bench::uniform(std::size_t(n), -0.1, 0.1, 23);
        x.insert(x.end(), b.begin(), b.end());
        return x;
    }

    template <class T>
    T evaluate(const blocks<T>& in, path how) const {
        const matrix<T>& w = in[0];
        const auto b = in[1].col(0);
        if (std::is_same_v<T, double> || how == path::one_entry)
            return ((w * batch).colwise() + b).array().tanh().sum();
        return (w.lazyProduct(batch).colwise() + b).array().tanh().sum();
    }
    double operator()(const std::vector<double>& x) const { return evaluate(split(shapes(), x), path::one_entry); }
};

struct least_squares {
    static constexpr const char* name = "least_squares";
    Eigen::Index n;
    explicit least_squares(Eigen::Index n_) : n(n_) {}

    shape_list shapes() const { return {{2 * n, n}, {2 * n, 1}}; }  // A, y
    std::vector<double> inputs() const { return bench::uniform(total_size(shapes()), -1.0, 1.0, 31); }

    template <class T>
    T evaluate(const blocks<T>& in, path how) const {
        const matrix<T>& a = in[0];
        const auto y = in[1].col(0);
        if constexpr (std::is_same_v<T, double>) {
            const vector<double> s = a.householderQr().solve(y);
            return s.squaredNorm();
        } else if (how == path::one_entry) {
            const vector<Real> s = tapeflow::householder_qr(a).solve(y);
            return tapeflow::squared_norm(s);
        } else {
            const vector<Real> s = a.householderQr().solve(y);
            return s.squaredNorm();
        }
    }
    double operator()(const std::vector<double>& x) const { return evaluate(split(shapes(), x), path::one_entry); }
};

struct poisson {
    static constexpr const char* name = "poisson";
    Eigen::Index n;
    vector<double> q;  // source term per cell
    explicit poisson(Eigen::Index n_) : n(n_), q(n) {
        for (Eigen::Index i = 0; i < n; ++i)
            q(i) = 1.0 + 0.5 * std::sin(6.283185307179586 * (double(i) + 0.5) / double(n));
    }

    shape_list shapes() const { return {{n, 1}}; }  // k per cell
    std::vector<double> inputs() const { return bench::uniform(std::size_t(n), 0.5, 1.5, 41); }

    // K(k): cell i exchanges with i-1 and i+1 through faces of conductance
    // harmonic mean of k / h^2, and with the boundary (u = 0) at h/2: 2 k / h^2.
    template <class T>
    matrix<T> assemble(const matrix<T>& k) const {
        const double h2 = 1.0 / double(n * n);
        matrix<T> K = matrix<T>::Zero(n, n);
        T left = 2.0 * k(0) / h2;
        for (Eigen::Index i = 0; i < n; ++i) {
            T right = i + 1 < n ? T(2.0 * k(i) * k(i + 1) / ((k(i) + k(i + 1)) * h2)) : T(2.0 * k(i) / h2);
            K(i, i) = left + right;
            if (i + 1 < n) {
                K(i, i + 1) = -right;
                K(i + 1, i) = -right;
            }
            left = std::move(right);
        }
        return K;
    }

    template <class T>
    T evaluate(const blocks<T>& in, path how) const {
        const matrix<T> K = assemble(in[0]);
        if constexpr (std::is_same_v<T, double>) {
            const vector<double> u = K.partialPivLu().solve(q);
            return u.squaredNorm();
        } else if (how == path::one_entry) {
            const vector<Real> u = tapeflow::partial_piv_lu(K).solve(q);
            return tapeflow::squared_norm(u);
        } else {
            const vector<Real> u = K.partialPivLu().solve(q.cast<Real>());
            return u.squaredNorm();
        }
    }
    double operator()(const std::vector<double>& x) const { return evaluate(split(shapes(), x), path::one_entry); }
};

// ---- gradients ----------------------------------------------------------------

struct tape_figures {
    double tape_bytes = 0;  // record_bytes + external_bytes
    double statements = 0;  // records, external entries included
    double externals = 0;
};


/// One tape per benchmark, reused across iterations (reset() keeps its memory).
struct gradient_driver {
    tapeflow::tape tape;  // declared first: destroyed after the inputs
    blocks<Real> in;
    // CPU seconds spent in the phases of the gradients since the last clear:
    // reset + fresh inputs, recording f, seed + sweep, reading the adjoints
    double phase[4] = {0, 0, 0, 0};

    std::vector<tapeflow::matrix_variable> variables;  // the inputs of the matrix-variable path

    template <class W>
    double run(const W& w, const std::vector<double>& xd, path how, std::vector<double>& g) {
        if constexpr (has_variables<W>::value)
            if (how == path::matrix_variable)
                return timed(w, xd, g, variables, [&] { return w.evaluate_variables(variables); });
        return timed(w, xd, g, in, [&] { return w.evaluate(in, how); });
    }

private:
    // input `m` of a gradient: the values `v`, registered (every element of a
    // Real matrix, one range for a matrix variable)
    void set_input(matrix<Real>& m, const matrix_view<double>& v) {
        m = v.cast<Real>();
        tapeflow::register_inputs(tape, m);
    }
    void set_input(tapeflow::matrix_variable& m, const matrix_view<double>& v) {
        m = tapeflow::matrix_variable(v);
        tapeflow::register_input(tape, m);
    }

    // One gradient of f = evaluate() at xd into g, the inputs of W's shapes
    // kept in `inputs`, its phases timed
    template <class W, class Inputs, class Evaluate>
    double timed(const W& w, const std::vector<double>& xd, std::vector<double>& g, Inputs& inputs,
                 Evaluate evaluate) {
        const double t0 = thread_cpu_seconds();
        tape.reset();
        tape.start_recording();
        const shape_list shapes = w.shapes();
        inputs.resize(shapes.size());
        std::size_t at = 0;
        for (std::size_t k = 0; k < shapes.size(); ++k) {
            const auto [rows, cols] = shapes[k];
            set_input(inputs[k], matrix_view<double>(xd.data() + at, rows, cols));
            at += std::size_t(rows * cols);
        }
        const double t1 = thread_cpu_seconds();
        Real y = evaluate();
        tape.register_output(y);
        tape.stop_recording();
        const double t2 = thread_cpu_seconds();
        tape.set_adjoint(y, 1.0);
        tape.sweep();
        const double t3 = thread_cpu_seconds();
        g.resize(xd.size());
        at = 0;
        for (const auto& m : inputs) {
            Eigen::Map<matrix<double>>(g.data() + at, m.rows(), m.cols()) = tapeflow::adjoints(tape, m);
            at += std::size_t(m.size());
        }
        const double t4 = thread_cpu_seconds();
        phase[0] += t1 - t0;
        phase[1] += t2 - t1;
        phase[2] += t3 - t2;
        phase[3] += t4 - t3;
        return y.value();
    }

public:
    tape_figures figures() const {  // of the last gradient (still on the tape)
        const tapeflow::tape_statistics s = tape.statistics();
        return {double(s.record_bytes + s.external_bytes), double(s.statements), double(s.externals)};
    }
};


// ---- registration -------------------------------------------------------------

struct settings {
    std::vector<long> sizes{32, 64, 128, 256, 512};
    double max_tape_gib = 2.0;
    double max_seconds = 4.0;
};
settings cfg;

const char* variant_name(path how) {
    return how == path::one_entry ? "one_entry" : how == path::scalar ? "scalar" : "matrix_variable";
}

// Primal medians, measured once per workload and size (lazily: a filtered run
// measures only what it times).
template <class W>
double primal_seconds(const W& w) {
    static std::map<long, double> cache;
    auto it = cache.find(long(w.n));
    if (it != cache.end()) return it->second;
    const blocks<double> in = split(w.shapes(), w.inputs());
    const double t = median_seconds([&] { benchmark::DoNotOptimize(w.evaluate(in, path::one_entry)); }, 15);
    cache.emplace(long(w.n), t);
    return t;
}

// Every run has the same counters (the CSV reporter needs that). `primal`:
// the primal seconds for a gradient run, 0 for a primal or skipped run.
template <class W>
void set_counters(benchmark::State& state, const W& w, double primal, const tape_figures& f,
                  const double* phase = nullptr) {
    using C = benchmark::Counter;
    // ms per gradient in each phase (the sums are divided by the iterations)
    static const char* const phases[4] = {"inputs_ms", "record_ms", "sweep_ms", "read_ms"};
    for (int p = 0; p < 4; ++p)
        state.counters[phases[p]] = C(phase ? phase[p] * 1e3 : 0.0, phase ? C::kAvgIterations : C::kDefaults);
    state.counters["n"] = double(w.n);
    state.counters["primal_ms"] = primal * 1e3;
    // time per gradient / primal time (the value is inverted per iteration)
    state.counters["gradient_over_primal"] =
        primal > 0 ? C(primal, C::kIsIterationInvariantRate | C::kInvert) : C(0.0);
    state.counters["tape_bytes"] = C(f.tape_bytes, C::kDefaults, C::kIs1024);
    state.counters["statements"] = f.statements;
    state.counters["externals"] = f.externals;
}

template <class W>
void register_workload() {
    // Tape of the scalar path at the sizes measured so far, for the skip rule.
    struct sample {
        double n, bytes, seconds;
    };
    std::vector<sample> scalar_samples;
    for (std::size_t at = 0; at < cfg.sizes.size(); ++at) {
        const long n = cfg.sizes[at];
        const bool last = at + 1 == cfg.sizes.size();
        const W w(n);
        const std::string prefix = std::string(W::name) + "/" + std::to_string(n) + "/";
        benchmark::RegisterBenchmark((prefix + "primal").c_str(), [w](benchmark::State& state) {
            const blocks<double> in = split(w.shapes(), w.inputs());
            for (auto _ : state) benchmark::DoNotOptimize(w.evaluate(in, path::one_entry));
            set_counters(state, w, 0.0, {});
        })->Unit(benchmark::kMillisecond);

        for (path how : {path::one_entry, path::scalar, path::matrix_variable}) {
            if (how == path::matrix_variable && !has_variables<W>::value) continue;
            std::string skip;
            if (how == path::scalar && scalar_samples.size() >= 2) {
                // grow the last sample by the exponent measured between the last two
                const sample& a = scalar_samples[scalar_samples.size() - 2];
                const sample& b = scalar_samples.back();
                const double e = std::log(b.bytes / a.bytes) / std::log(b.n / a.n);
                const double bytes = b.bytes * std::pow(double(n) / b.n, e);
                const double seconds = b.seconds * std::pow(double(n) / b.n, e);
                if (bytes > cfg.max_tape_gib * 1073741824.0 || seconds > cfg.max_seconds) {
                    char why[240];
                    std::snprintf(why, sizeof why,
                                  "skipped: predicted %.2f GiB of tape and %.1f s per gradient (limits %.3g GiB, "
                                  "%.3g s)",
                                  bytes / 1073741824.0, seconds, cfg.max_tape_gib, cfg.max_seconds);
                    skip = why;
                    std::fprintf(stderr, "%s%s: %s\n", prefix.c_str(), variant_name(how), why);
                    scalar_samples.push_back({double(n), bytes, seconds});
                }
            }
            if (how == path::scalar && skip.empty() && n >= 64 && !last) {
                // measure this size's scalar tape now, for the predictions of the larger sizes
                gradient_driver d;
                std::vector<double> g;
                const std::vector<double> x = w.inputs();
                d.run(w, x, how, g);
                const double start = thread_cpu_seconds();
                d.run(w, x, how, g);
                scalar_samples.push_back({double(n), d.figures().tape_bytes, thread_cpu_seconds() - start});
            }
            benchmark::RegisterBenchmark((prefix + variant_name(how)).c_str(), [w, how, skip](benchmark::State& state) {
                if (!skip.empty()) {
                    state.SkipWithError(skip.c_str());
                    for (auto _ : state) {
                    }
                    set_counters(state, w, 0.0, {});
                    return;
                }
                const double primal = primal_seconds(w);
                const std::vector<double> x = w.inputs();
                std::vector<double> g;
                gradient_driver d;
                d.run(w, x, how, g);  // warm-up: the tape grows to its size here
                std::fill(std::begin(d.phase), std::end(d.phase), 0.0);
                for (auto _ : state) {
                    benchmark::DoNotOptimize(d.run(w, x, how, g));
                    benchmark::ClobberMemory();
                }
                set_counters(state, w, primal, d.figures(), d.phase);
            })->Unit(benchmark::kMillisecond);
        }
    }
}

// ---- checks ---------------------------------------------------------------------

template <class W>
bool check_workload(long n) {
    const W w(n);
    const std::vector<double> x = w.inputs();
    std::vector<double> g_one, g_scalar;
    gradient_driver one, scalar;
    const double f_one = one.run(w, x, path::one_entry, g_one);
    const double f_scalar = scalar.run(w, x, path::scalar, g_scalar);
    const double f = w(x);
    const tape_figures t_one = one.figures(), t_scalar = scalar.figures();
    std::string report;
    bool ok = true;
    const double df = std::max(std::fabs(f_one - f), std::fabs(f_scalar - f)) / std::max(1.0, std::fabs(f));
    const double dg = bench::relative_difference(g_one, g_scalar);
    char line[300];
    std::snprintf(line, sizeof line,
                  "  one_entry vs scalar: max relative difference %.1e (f: %.1e); externals %g (one_entry), %g "
                  "(scalar); statements %g, %g\n",
                  dg, df, t_one.externals, t_scalar.externals, t_one.statements, t_scalar.statements);
    report += line;
    if (!(dg < 1e-9) || !(df < 1e-12)) ok = false;
    if (t_one.externals < 1) {
        report += "  the one-entry path taped no external entry\n";
        ok = false;
    }
    if ((std::is_same_v<W, product> || std::is_same_v<W, dense_layer>) && t_scalar.externals != 0) {
        report += "  lazyProduct taped an external entry\n";
        ok = false;
    }
    if constexpr (has_variables<W>::value) {
        std::vector<double> g_variables;
        gradient_driver variables;
        const double f_variables = variables.run(w, x, path::matrix_variable, g_variables);
        const double dv = bench::relative_difference(g_variables, g_one);
        std::snprintf(line, sizeof line,
                      "  matrix_variable vs one_entry: max relative difference %.1e (f: %.1e); externals %g\n", dv,
                      std::fabs(f_variables - f) / std::max(1.0, std::fabs(f)), variables.figures().externals);
        report += line;
        if (!(dv < 1e-9) || !(std::fabs(f_variables - f) / std::max(1.0, std::fabs(f)) < 1e-12)) ok = false;
        if (variables.figures().externals != 2) {
            report += "  the matrix-variable product did not tape 2 external entries\n";
            ok = false;
        }
    }
    ok = bench::check_against_finite_differences(w, g_one, report) && ok;
    std::fprintf(stderr, "%s n=%ld: %s\n%s", W::name, n, ok ? "ok" : "MISMATCH", report.c_str());
    return ok;
}

bool check_all() {
    bool ok = true;
    for (long n : {16L, 40L}) {
        ok = check_workload<product>(n) && ok;
        ok = check_workload<dense_layer>(n) && ok;
        ok = check_workload<least_squares>(n) && ok;
        ok = check_workload<poisson>(n) && ok;
    }
    return ok;
}

bool parse_sizes(const char* list) {
    cfg.sizes.clear();
    for (const char* p = list; *p;) {
        char* end = nullptr;
        const long v = std::strtol(p, &end, 10);
        if (end == p || v < 2) return false;
        cfg.sizes.push_back(v);
        p = *end == ',' ? end + 1 : end;
        if (*end != ',' && *end != '\0') return false;
    }
    return !cfg.sizes.empty();
}

}  // namespace
}  // namespace eigen_bench

int main(int argc, char** argv) {
    using namespace eigen_bench;
    bool check_only = false;
    std::vector<char*> args;
    for (int i = 0; i < argc; ++i) {
        const char* a = argv[i];
        if (std::strcmp(a, "--check-only") == 0) {
            check_only = true;
        } else if (std::strncmp(a, "--sizes=", 8) == 0) {
            if (!parse_sizes(a + 8)) {
                std::fprintf(stderr, "bad --sizes: %s\n", a + 8);
                return 2;
            }
        } else if (std::strncmp(a, "--max-tape-gib=", 15) == 0) {
            cfg.max_tape_gib = std::atof(a + 15);
        } else if (std::strncmp(a, "--max-seconds=", 14) == 0) {
            cfg.max_seconds = std::atof(a + 14);
        } else {
            args.push_back(argv[i]);
        }
    }
    int n = int(args.size());
    benchmark::Initialize(&n, args.data());
    if (!check_all()) {
        std::fprintf(stderr, "gradient check FAILED: not timing anything\n");
        return 1;
    }
    if (check_only) return 0;
    register_workload<product>();
    register_workload<dense_layer>();
    register_workload<least_squares>();
    register_workload<poisson>();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
