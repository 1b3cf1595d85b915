// bench/harness/sacado_tool.hpp - Sacado (Trilinos, Debian
// libtrilinos-sacado-dev) reverse mode: Sacado::Rad::ADvar<double>.
//
// Sacado::Rad has no erf/erfc; they are added here with ADf1 (a value and
// its exact partial), which is how Sacado documents user functions.
#pragma once

#include <Sacado_trad.hpp>
#include <Trilinos_version.h>

#include <cmath>
#include <string>
#include <vector>

#include "tools.hpp"

namespace Sacado {
namespace Rad {

template <class D>
ADvari<D>& erfc(const ADvari<D>& x) {
    const D v = x.Val;
    return ADf1(std::erfc(v), D(-1.1283791670955126) * std::exp(-v * v), x);
}
template <class D>
ADvari<D>& erfc(const IndepADvar<D>& x) {
    const D v = x.val();
    return ADf1(std::erfc(v), D(-1.1283791670955126) * std::exp(-v * v), x);
}
template <class D>
ADvari<D>& erf(const ADvari<D>& x) {
    const D v = x.Val;
    return ADf1(std::erf(v), D(1.1283791670955126) * std::exp(-v * v), x);
}
template <class D>
ADvari<D>& erf(const IndepADvar<D>& x) {
    const D v = x.val();
    return ADf1(std::erf(v), D(1.1283791670955126) * std::exp(-v * v), x);
}

}  // namespace Rad
}  // namespace Sacado

namespace bench {

inline std::string sacado_version() { return std::string("Trilinos ") + TRILINOS_VERSION_STRING; }

struct sacado_tool {
    static constexpr const char* name = "sacado";
    using ad = Sacado::Rad::ADvar<double>;

    template <class K>
    double gradient(const K& kernel, const std::vector<double>& xd, std::vector<double>& g) {
        std::vector<ad> x(xd.size());
        for (std::size_t i = 0; i < xd.size(); ++i) x[i] = xd[i];
        ad y = kernel(x);
        ad::Gradcomp();  // seeds y with 1, sweeps, and recycles the tape memory
        g.resize(xd.size());
        for (std::size_t i = 0; i < xd.size(); ++i) g[i] = x[i].adj();
        return y.val();
    }
    tool_stats stats() const { return {}; }
};

}  // namespace bench
