// tests/random/print.hpp - a random program as C++-like text, for failure
// reports and for reading what the generator makes.
//
//   x0 x1 ...  inputs (read-only), v<i> variables and temporaries by slot;
//   a shared subexpression (DAG) is printed at each use; custom and eigen
//   statements are printed as calls with their data (the formulas are in
//   interpreter_custom.hpp and program_eigen.hpp).
#pragma once

#include <sstream>
#include <string>

#include "program.hpp"

namespace tapeflow_random {
namespace print_detail {

inline std::string slot_name(const program& p, int slot) {
    return (slot < p.inputs ? "x" : "v") + std::to_string(slot);
}

inline void number(std::ostream& out, double k) {
    std::ostringstream s;
    s.precision(17);
    s << k;
    out << (k < 0 ? "(" + s.str() + ")" : s.str());
}

inline void operand_(std::ostream& out, const program& p, const expr& e, const operand& a);

inline void node_(std::ostream& out, const program& p, const expr& e, int i) {
    const node& n = e.nodes[std::size_t(i)];
    const auto arg = [&](const operand& a) { operand_(out, p, e, a); };
    if (n.code == op::var) {
        out << slot_name(p, n.index);
    } else if (n.code == op::constant) {
        number(out, n.k);
    } else if (n.code == op::neg || n.code == op::plus) {
        out << name(n.code) << "(";
        arg(n.a);
        out << ")";
    } else if (n.code >= op::add && n.code <= op::div) {
        out << "(";
        arg(n.a);
        out << " " << name(n.code) << " ";
        arg(n.b);
        out << ")";
    } else if (n.code == op::fused) {
        out << "fused" << n.index << "(";
        arg(n.a), out << ", ", arg(n.b), out << ", ", arg(n.c), out << ", ", arg(n.d);
        out << ")";
    } else {
        out << name(n.code) << "(";
        arg(n.a);
        if (n.code == op::powi || n.code == op::ldexp) out << ", " << n.index;
        if (n.code > op::nearbyint && n.code != op::powi && n.code != op::ldexp) out << ", ", arg(n.b);
        if (n.code == op::hypot3 || n.code == op::fma) out << ", ", arg(n.c);
        out << ")";
    }
}

inline void operand_(std::ostream& out, const program& p, const expr& e, const operand& a) {
    if (a.node < 0)
        number(out, a.k);
    else
        node_(out, p, e, a.node);
}

inline std::string text(const program& p, const expr& e) {
    std::ostringstream out;
    node_(out, p, e, int(e.nodes.size()) - 1);
    return out.str();
}

inline std::string leaf_text(const program& p, const leaf& l) {
    std::ostringstream out;
    if (l.slot >= 0)
        out << slot_name(p, l.slot);
    else
        number(out, l.k);
    return out.str();
}

/// `(a, b)` of the written slots.
inline std::string outs_text(const program& p, const statement& s) {
    std::string t = "(";
    for (std::size_t j = 0; j < s.outs.size(); ++j) t += (j ? ", " : "") + slot_name(p, s.outs[j].slot);
    return t + ")";
}

inline void custom_(std::ostream& out, const program& p, const statement& s) {
    static const char* const families[] = {"tanh", "sin", "rational"};
    static const char* const apis[] = {"external_function", "custom_adjoint in place",
                                       "custom_adjoint shuffled"};
    const std::size_t n = s.leaves.size();
    out << outs_text(p, s) << " = custom<" << families[s.form] << ", " << apis[s.api] << ">(";
    for (std::size_t i = 0; i < n; ++i) out << (i ? ", " : "") << leaf_text(p, s.leaves[i]);
    out << ");  // y_j = s_j g(b_j + sum_i w_ji x_i):";
    for (std::size_t j = 0; j < s.outs.size(); ++j) {
        out << " [b ";
        number(out, s.ks[j * (n + 2)]);
        out << ", s ";
        number(out, s.ks[j * (n + 2) + 1]);
        out << ", w";
        for (std::size_t i = 0; i < n; ++i) out << " ", number(out, s.ks[j * (n + 2) + 2 + i]);
        out << "]";
    }
    out << "\n";
}

inline void eigen_(std::ostream& out, const program& p, const statement& s) {
    static const char* const ops[] = {"product", "mixed_product", "array", "reduce", "solve"};
    out << outs_text(p, s) << " = eigen<" << ops[s.form] << " " << s.api << ">(rows " << s.rows << ", cols "
        << s.cols << ", depth " << s.depth << "; leaves";
    for (const leaf& l : s.leaves) out << " " << leaf_text(p, l);
    out << "; ks";
    for (double k : s.ks) out << " ", number(out, k);
    out << ");  // slot = squash(element):";
    for (const out_slot& o : s.outs) {
        out << " " << slot_name(p, o.slot) << " = ";
        if (o.squash == 1) out << "asinh ";
        if (o.squash == 2) out << "tanh/", number(out, o.scale), out << " ";
        if (o.element < 0)
            out << "sum";
        else
            out << "r[" << o.element << "]";
    }
    out << "\n";
}

inline void statements(std::ostream& out, const program& p, const std::vector<statement>& body, int indent,
                       int& slots) {
    const std::string pad(std::size_t(indent) * 2, ' ');
    for (const statement& s : body) {
        const std::string t = slot_name(p, s.target);
        const std::string rhs = s.e.empty() ? "" : text(p, s.e);
        std::ostringstream k;
        number(k, s.k);
        out << pad;
        switch (s.kind) {
        case stmt::assign: out << t << " = " << rhs << ";\n"; break;
        case stmt::add_assign: out << t << " += " << (s.e.empty() ? k.str() : rhs) << ";\n"; break;
        case stmt::sub_assign: out << t << " -= " << (s.e.empty() ? k.str() : rhs) << ";\n"; break;
        case stmt::mul_assign: out << t << " *= " << (s.e.empty() ? k.str() : rhs) << ";\n"; break;
        case stmt::div_assign: out << t << " /= " << (s.e.empty() ? k.str() : rhs) << ";\n"; break;
        case stmt::increment: {
            static const char* const forms[] = {"++%;", "%++;", "--%;", "%--;"};
            const std::string f = forms[s.variant];
            out << f.substr(0, f.find('%')) << t << f.substr(f.find('%') + 1) << "\n";
            break;
        }
        case stmt::set_constant: out << t << " = " << k.str() << ";  // passive\n"; break;
        case stmt::copy: out << t << " = " << slot_name(p, s.source) << ";\n"; break;
        case stmt::swap: out << "std::swap(" << t << ", " << slot_name(p, s.source) << ");\n"; break;
        case stmt::rotate:
            out << "{ Real c = " << t << "; " << t << " = " << slot_name(p, s.source) << "; "
                << slot_name(p, s.source) << " = c; }\n";
            break;
        case stmt::block: {
            out << "{\n";
            const int before = slots;
            for (const expr& e : s.temps)
                out << pad << "  Real " << slot_name(p, slots++) << " = " << text(p, e) << ";\n";
            statements(out, p, s.body, indent + 1, slots);
            slots = before;
            out << pad << "}\n";
            break;
        }
        case stmt::branch:
            out << "if (" << rhs << " < " << text(p, s.e2) << ") {\n";
            statements(out, p, s.body, indent + 1, slots);
            out << pad << "} else {\n";
            statements(out, p, s.other, indent + 1, slots);
            out << pad << "}\n";
            break;
        case stmt::loop:
            out << "for (int i = 0; i < " << s.count << "; ++i) {\n";
            statements(out, p, s.body, indent + 1, slots);
            if (s.variant == 1) out << pad << "  if (" << t << " > " << k.str() << ") break;\n";
            out << pad << "}\n";
            break;
        case stmt::region:
            out << "{ tapeflow::Region region;\n";
            statements(out, p, s.body, indent + 1, slots);
            out << pad << "}\n";
            break;
        case stmt::custom: custom_(out, p, s); break;
        case stmt::eigen: eigen_(out, p, s); break;
        case stmt::count: break;
        }
    }
}

}  // namespace print_detail

/// The program as text.
inline std::string to_string(const program& p) {
    std::ostringstream out;
    out << "// seed " << p.seed << ", inputs x0.."
        << "x" << p.inputs - 1 << "\n";
    int slots = p.inputs;
    for (const expr& e : p.vars)
        out << "Real " << print_detail::slot_name(p, slots++) << " = " << print_detail::text(p, e) << ";\n";
    print_detail::statements(out, p, p.body, 0, slots);
    for (std::size_t k = 0; k < p.outputs.size(); ++k)
        out << "output " << k << " = " << print_detail::text(p, p.outputs[k]) << ";\n";
    return out.str();
}

}  // namespace tapeflow_random
