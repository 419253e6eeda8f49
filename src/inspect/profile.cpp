// Room — inspect: the op profiler, an observer of the engine (see profile.hpp).
#include "inspect/profile.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

namespace rf::profile {
namespace {

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point from, Clock::time_point to) {
    return std::chrono::duration<double>(to - from).count();
}

class Profiler final : public EngineObserver {
public:
    std::map<std::string, Row> table;

    void forward_op(const char* op) override {
        const Clock::time_point now = Clock::now();
        add(op, false, seconds(mark_, now));
        mark_ = now;
    }
    void begin(const char* name, bool backward) override {
        name_ = name;
        backward_ = backward;
        start_ = Clock::now();
    }
    void end() override {
        mark_ = Clock::now();  // the next op's forward counts from here
        add(name_, backward_, seconds(start_, mark_));
    }
    void restart() { mark_ = Clock::now(); }

private:
    void add(const char* name, bool backward, double s) {
        Row& row = table[name];
        row.name = name;
        ++(backward ? row.backward_calls : row.forward_calls);
        (backward ? row.backward_s : row.forward_s) += s;
    }
    Clock::time_point mark_, start_;
    const char* name_ = "";
    bool backward_ = false;
};

Profiler& the_profiler() {
    static Profiler profiler;
    return profiler;
}

}  // namespace

bool enabled() { return engine_observer() == &the_profiler(); }
void enable(bool on) {
    the_profiler().restart();
    set_engine_observer(on ? &the_profiler() : nullptr);
}
void reset() { the_profiler().table.clear(); }
EngineObserver* observer() {
    the_profiler().restart();
    return &the_profiler();
}

std::vector<Row> rows() {
    std::vector<Row> out;
    for (const auto& [name, row] : the_profiler().table) out.push_back(row);
    std::stable_sort(out.begin(), out.end(), [](const Row& a, const Row& b) {
        return a.forward_s + a.backward_s > b.forward_s + b.backward_s;
    });
    return out;
}

std::string report(size_t steps, double step_seconds) {
    const double n = double(std::max<size_t>(steps, 1));
    const double step_ms = 1e3 * step_seconds / n;
    std::string out;
    char line[160];
    std::snprintf(line, sizeof line, "profile: %zu steps, %.1f ms per step\n", steps, step_ms);
    out += line;
    std::snprintf(line, sizeof line, "  %-22s %9s %12s %12s %8s\n", "op or phase", "calls/step",
                  "forward ms", "backward ms", "share");
    out += line;
    double accounted = 0;
    for (const Row& r : rows()) {
        const double ms = 1e3 * (r.forward_s + r.backward_s) / n;
        accounted += ms;
        std::snprintf(line, sizeof line, "  %-22s %9.1f %12.2f %12.2f %7.1f%%\n", r.name.c_str(),
                      double(r.forward_calls ? r.forward_calls : r.backward_calls) / n, 1e3 * r.forward_s / n, 1e3 * r.backward_s / n,
                      step_ms > 0 ? 100.0 * ms / step_ms : 0.0);
        out += line;
    }
    std::snprintf(line, sizeof line, "  %-22s %9s %12s %12s %7.1f%%\n", "(not in a row)", "", "",
                  "", step_ms > 0 ? 100.0 * std::max(0.0, step_ms - accounted) / step_ms : 0.0);
    out += line;
    return out;
}

}  // namespace rf::profile
