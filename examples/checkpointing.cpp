// Checkpointing a time loop whose step advances the time: the time goes
// into the loop's passive part, which every snapshot keeps beside the
// state's values (docs/checkpointing.md). A forced, damped oscillator
// integrated until t >= t_end; the gradient of its final energy with respect to
// the initial position, velocity and damping, through
// tapeflow::checkpointed_while, against plain taping and finite
// differences. Returns 1 (saying why) if they differ.
#include <tapeflow/checkpoint/checkpointed_loop.hpp>
#include <tapeflow/tapeflow.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

constexpr double t_end = 10.0;
constexpr double dt = 0.01;

// One step of x'' = -x - c x' + sin(t) (semi-implicit Euler) on the state
// {x, v, c}, at time t.
template <class T>
void oscillator_step(std::vector<T>& s, double t) {
    s[1] = s[1] + dt * (-s[0] - s[2] * s[1] + std::sin(t));
    s[0] = s[0] + dt * s[1];
}

template <class T>
T energy(const std::vector<T>& s) {
    return 0.5 * (s[0] * s[0] + s[1] * s[1]);
}

}  // namespace

int main() {
    using tapeflow::Real;
    const std::vector<double> x0{1.0, 0.0, 0.3};  // position, velocity, damping

    // plain taping: every step on the tape
    const auto plain = tapeflow::gradient(
        [](const std::vector<Real>& v) {
            std::vector<Real> s = v;
            for (double t = 0; t < t_end; t += dt) oscillator_step(s, t);
            return energy(s);
        },
        x0);

    // checkpointed: 8 snapshots of {x, v, c} and of the time
    std::shared_ptr<const tapeflow::checkpoint_statistics> stats;
    double t = 0;
    const auto checkpointed = tapeflow::gradient(
        [&](const std::vector<Real>& v) {
            std::vector<Real> s = v;
            t = 0;
            stats = tapeflow::checkpointed_while(
                s, t, [](const auto&, double time) { return time < t_end; },
                [](auto& state, double& time) {
                    oscillator_step(state, time);
                    time += dt;
                },
                8);
            return energy(s);
        },
        x0);

    // finite differences of the loop on doubles
    std::vector<double> fd(x0.size());
    for (std::size_t i = 0; i < x0.size(); ++i) {
        auto f = [&](double h) {
            std::vector<double> s = x0;
            s[i] += h;
            for (double time = 0; time < t_end; time += dt) oscillator_step(s, time);
            return energy(s);
        };
        fd[i] = (f(1e-6) - f(-1e-6)) / 2e-6;
    }

    std::printf("%llu steps, %llu run again, final time %.4f\n", (unsigned long long)stats->steps,
                (unsigned long long)stats->steps_recomputed, t);
    int failures = 0;
    const char* names[] = {"d/dx0", "d/dv0", "d/dc"};
    for (std::size_t i = 0; i < x0.size(); ++i) {
        std::printf("%-6s checkpointed %+.10f  plain %+.10f  finite differences %+.6f\n", names[i],
                    checkpointed[i], plain[i], fd[i]);
        if (std::fabs(checkpointed[i] - plain[i]) > 1e-12 * (1 + std::fabs(plain[i]))) {
            std::printf("MISMATCH: %s differs from plain taping\n", names[i]);
            ++failures;
        }
        if (std::fabs(checkpointed[i] - fd[i]) > 1e-6 * (1 + std::fabs(fd[i]))) {
            std::printf("MISMATCH: %s differs from finite differences\n", names[i]);
            ++failures;
        }
    }
    return failures == 0 ? 0 : 1;
}
