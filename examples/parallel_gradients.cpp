// examples/parallel_gradients.cpp - many independent gradients at once, one
// tape per thread (docs/parallel.md).
//
// A least-squares fit of y = a exp(-b t) + c to noisy data, for a batch of
// 32 parameter guesses: the gradient of the loss at each guess. Each worker
// thread calls tapeflow::gradient, which records on the thread's own tape
// (tapeflow::tape::active(), created on first use and kept for the thread's
// later calls): no locks, no shared tape. With OpenMP the loop is
//
//   #pragma omp parallel for
//   for (long k = 0; k < guesses; ++k) grads[k] = tapeflow::gradient(loss, params[k]);
#include <tapeflow/tapeflow.hpp>

#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

struct loss_function {
    std::vector<double> t, y;  // the data
    template <class T>
    T operator()(const std::vector<T>& p) const {  // p = (a, b, c)
        using std::exp;
        T sum = 0.0;
        for (std::size_t i = 0; i < t.size(); ++i) {
            T r = p[0] * exp(-p[1] * t[i]) + p[2] - y[i];
            sum += r * r;
        }
        return sum;
    }
};

int main() {
    loss_function loss;
    for (int i = 0; i < 2000; ++i) {
        const double t = 0.005 * i;
        loss.t.push_back(t);
        loss.y.push_back(2.0 * std::exp(-1.5 * t) + 0.3 + 0.01 * std::sin(37.0 * i));
    }
    std::vector<std::vector<double>> guesses;
    for (int k = 0; k < 32; ++k) guesses.push_back({1.0 + 0.05 * k, 1.0 + 0.02 * k, 0.1 * (k % 5)});

    // one after the other, on this thread's tape
    std::vector<std::vector<double>> serial;
    for (const auto& p : guesses) serial.push_back(tapeflow::gradient(loss, p));

    // on 4 threads, each on its own tape; guesses k, k + 4, ... go to thread k
    std::vector<std::vector<double>> parallel(guesses.size());
    std::vector<std::thread> workers;
    for (std::size_t w = 0; w < 4; ++w)
        workers.emplace_back([&, w] {
            for (std::size_t k = w; k < guesses.size(); k += 4) parallel[k] = tapeflow::gradient(loss, guesses[k]);
        });
    for (auto& w : workers) w.join();

    bool same = true;
    for (std::size_t k = 0; k < guesses.size(); ++k) same = same && parallel[k] == serial[k];
    std::printf("gradient at guess 0: (%.6f, %.6f, %.6f)\n", serial[0][0], serial[0][1], serial[0][2]);
    std::printf("%zu gradients on 4 threads %s the serial ones bit for bit\n", guesses.size(),
                same ? "equal" : "DIFFER FROM");
    return same ? 0 : 1;
}
