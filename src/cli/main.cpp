// Stage 9 — cli: the `roformer` command. Subcommands live in cmd_*.cpp (see commands.hpp).
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <iostream>
#include <tuple>
#include <vector>

#include "cli/commands.hpp"

namespace rf::cli {

static std::vector<std::tuple<int, const char*, CommandAdder>>& registry() {
    static std::vector<std::tuple<int, const char*, CommandAdder>> commands;
    return commands;
}

int register_command(int order, const char* name, CommandAdder add) {
    registry().emplace_back(order, name, add);
    return static_cast<int>(registry().size());
}

// Idle OpenMP threads should sleep, not spin. Our loops run on libgomp's pool, our matrix
// products on OpenBLAS's own pthread pool (Debian's libopenblas0-pthread); by default libgomp's
// workers spin for a while after every parallel loop, on the very cores the BLAS workers need
// next, and two threads on two cores ran 2× slower than one (README, Performance). With
// OMP_WAIT_POLICY=passive they ran 1.5× faster than one. libgomp reads the variable once, when
// it is loaded — before main — so the only way to choose it for the user is to set it and
// start this program again, once. A value the user set is left alone; if the restart fails,
// we simply carry on with the default policy. execv keeps the process id, so the pid a shell
// got from `roformer train &` is the one that holds the run's lock and takes its signals.
static void prefer_passive_openmp(char** argv) {
    if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
    if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
    execv("/proc/self/exe", argv);  // returns only if it failed
}

}  // namespace rf::cli

int main(int argc, char** argv) {
    rf::cli::prefer_passive_openmp(argv);
    CLI::App app{"roformer — train and study RoFormer (rotary position embedding) MLMs on a CPU"};
    app.require_subcommand(1);
    auto commands = rf::cli::registry();
    std::sort(commands.begin(), commands.end(),
              [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
    for (const auto& [order, name, add] : commands) add(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);  // prints help or the usage error
        return code == 0 ? 0 : 2;
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
