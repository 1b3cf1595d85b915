// tapeflow/tapeflow.hpp - the header users include.
//
// Types to start with:
//   tapeflow::Real    active double on the calling thread's tape. Swap it
//                     for double in your (templated) code and call
//                     tapeflow::gradient / value_and_gradient / jacobian.
//   tapeflow::tape    the tape behind Real, for simulations that record
//                     once and sweep many times (tape::active()).
//   tapeflow::Dual    forward mode: a double with a tangent, no tape
//                     (dual.hpp). basic_dual<double, N> carries N
//                     directions at once. tapeflow::derivative (J v) and
//                     jacobian_forward, for few inputs and many outputs
//                     (forward_drivers.hpp, docs/modes.md).
//   basic_real<Dual>  second order (forward over reverse): a Real whose
//                     values, partials and adjoints are Duals.
//                     tapeflow::hessian, hessian_vector_product,
//                     hessian_diagonal (hessian_drivers.hpp).
//   tapeflow::Region  RAII scope that groups records (a time step, a loop
//                     body) for statistics.
//   tapeflow::custom_adjoint / external_function
//                     tape a block of work on doubles as one entry with
//                     a reverse rule you write (custom_adjoint.hpp).
//   tapeflow::hardware_model
//                     counts the bytes a tape moves per memory level
//                     (SRAM, DRAM, file) and their energy; attach it with
//                     tape_options::observer (hw/hardware_model.hpp;
//                     hw/report.hpp prints it, needs fmt).
//   #include <tapeflow/eigen.hpp> (opt-in) for Eigen matrices of Real.
//   basic_real<float>, basic_real<long double> (RealF, RealL) and their
//   tapes, for other precisions.
//
// Layout: expr/ builds expression trees and their partials, tape/ stores the
// records in tiles and sweeps them, stream/ moves tiles (scratchpad, FIFO,
// spill file, prefetch thread), hw/ models the memory hierarchy; docs/
// explains each.
#pragma once

#include "complex.hpp"
#include "config.hpp"
#include "custom_adjoint.hpp"
#include "drivers.hpp"
#include "dual.hpp"
#include "error.hpp"
#include "expr/binary_functions.hpp"
#include "expr/binary_operators.hpp"
#include "expr/comparisons.hpp"
#include "expr/unary_functions.hpp"
#include "forward_drivers.hpp"
#include "hessian_drivers.hpp"
#include "hw/hardware_model.hpp"
#include "real.hpp"
#include "std.hpp"
#include "tape/parallel_region.hpp"
#include "tape/region.hpp"
#include "tape/tape.hpp"

namespace tapeflow {

using Real = basic_real<double>;
using RealF = basic_real<float>;
using RealL = basic_real<long double>;

using tape = basic_tape<double>;
using tape_f = basic_tape<float>;
using tape_l = basic_tape<long double>;

using Region = basic_region<double>;

}  // namespace tapeflow
