// Stage 8 — cli: the `roformer` command. Subcommands live in cmd_*.cpp (see commands.hpp).
#include <algorithm>
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

}  // namespace rf::cli

int main(int argc, char** argv) {
    CLI::App app{"roformer — train and study RoFormer (rotary position embedding) MLMs on a CPU"};
    app.require_subcommand(1);
    auto commands = rf::cli::registry();
    std::sort(commands.begin(), commands.end(),
              [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
    for (const auto& [order, name, add] : commands) add(app);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        const int code = app.exit(e);   // prints help or the usage error
        return code == 0 ? 0 : 2;
    } catch (const std::exception& e) {
        std::cerr << "error: " << e.what() << "\n";
        return 2;
    }
    return 0;
}
