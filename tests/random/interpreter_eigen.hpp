// tests/random/interpreter_eigen.hpp - runs an eigen statement (program.hpp,
// program_eigen.hpp) with T = double, the dual numbers or tapeflow::Real.
//
// Defined in interpreter_eigen.cpp, the only translation unit that includes
// Eigen (built when CMake finds Eigen 3.4, with TAPEFLOW_RANDOM_EIGEN and
// EIGEN_DONT_VECTORIZE: see there why), and instantiated there for the four
// types the checks use.
#pragma once

#include <vector>

#include <tapeflow/tapeflow.hpp>

#include "program.hpp"
#include "support/dual.hpp"

namespace tapeflow_random {

/// The values of the slots s.outs (in order) that eigen statement s computes
/// from the slots `slots` (the interpreter's visible slots).
template <class T>
std::vector<T> eigen_results(const statement& s, const std::vector<const T*>& slots);

extern template std::vector<double> eigen_results(const statement&, const std::vector<const double*>&);
extern template std::vector<tapeflow_test::dual> eigen_results(
    const statement&, const std::vector<const tapeflow_test::dual*>&);
extern template std::vector<tapeflow_test::dual_magnitude> eigen_results(
    const statement&, const std::vector<const tapeflow_test::dual_magnitude*>&);
extern template std::vector<tapeflow::Real> eigen_results(
    const statement&, const std::vector<const tapeflow::Real*>&);

}  // namespace tapeflow_random
