// tapeflow/eigen/products.hpp - dense matrix products of Real as ONE tape
// entry each: C = A * B, y = A * x, in any pairing of Real and double.
//
// The kernels are in detail/products.hpp, a part of num_traits.hpp: every
// tapeflow Eigen header includes them (see num_traits.hpp for why), and this
// header is kept for the programs that name it. docs/eigen.md, "Products".
#pragma once

#include "num_traits.hpp"
