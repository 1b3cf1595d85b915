// tests/support/jacobian_rows.hpp - the rows of a recorded Jacobian by
// scalar sweeps (one per output) and by vector reverse sweeps (Lanes
// outputs per sweep), for the tests that compare the two bit for bit.
// `r` is a recording with its inputs `r.x` and outputs `r.y` (Reals of `t`).
#pragma once

#include <cstddef>
#include <vector>

#include <tapeflow/tapeflow.hpp>

namespace tapeflow_test {

/// Row k: the adjoints of r.x after seeding r.y[k] with 1 and one sweep.
template <class Recording>
std::vector<std::vector<double>> scalar_rows(tapeflow::tape& t, const Recording& r) {
    std::vector<std::vector<double>> J(r.y.size(), std::vector<double>(r.x.size()));
    for (std::size_t k = 0; k < r.y.size(); ++k) {
        t.clear_adjoints();
        t.set_adjoint(r.y[k], 1.0);
        t.sweep();
        for (std::size_t i = 0; i < r.x.size(); ++i) J[k][i] = t.adjoint(r.x[i]);
    }
    t.clear_adjoints();
    return J;
}

/// The same rows from ceil(m / Lanes) sweeps of tapeflow::lane_adjoints.
template <std::size_t Lanes, class Recording>
std::vector<std::vector<double>> lane_rows(tapeflow::tape& t, const Recording& r) {
    std::vector<std::vector<double>> J(r.y.size(), std::vector<double>(r.x.size()));
    tapeflow::lane_adjoints<double, Lanes> bar(t);
    for (std::size_t first = 0; first < r.y.size(); first += Lanes) {
        bar.clear();
        for (std::size_t l = 0; l < Lanes && first + l < r.y.size(); ++l) bar.set(r.y[first + l], l, 1.0);
        t.sweep(bar);
        for (std::size_t l = 0; l < Lanes && first + l < r.y.size(); ++l)
            for (std::size_t i = 0; i < r.x.size(); ++i) J[first + l][i] = bar.get(r.x[i], l);
    }
    return J;
}

}  // namespace tapeflow_test
