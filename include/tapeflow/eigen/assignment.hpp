// tapeflow/eigen/assignment.hpp - Eigen moves a computed Real coefficient
// into its destination (one record per coefficient, not two).
//
// The specializations are in detail/assignment.hpp, a part of num_traits.hpp:
// every tapeflow Eigen header includes them (see num_traits.hpp for why), and
// this header is kept for the programs that name it. docs/eigen.md,
// "Assignments".
#pragma once

#include "num_traits.hpp"
