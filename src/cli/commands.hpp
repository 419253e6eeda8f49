// Room — cli: how subcommands plug into the `roformer` binary.
//
// Each src/cli/cmd_*.cpp defines one function that adds its subcommand (options + callback)
// to the app, and registers it with RF_COMMAND(name, function). main.cpp builds the app from
// the registry, so adding a command never touches another file; the order `roformer --help`
// lists them in is one list in main.cpp (kCommandOrder), and a command not on it is listed
// after those on it.
// Callbacks report bad input by throwing std::exception with a message that names the bad
// thing and how to fix it; main prints it as one line "error: ..." and exits with 2.
#pragma once

#include <CLI/CLI.hpp>

namespace rf::cli {

using CommandAdder = void (*)(CLI::App& app);
int register_command(const char* name, CommandAdder add);

}  // namespace rf::cli

#define RF_COMMAND(name, fn) \
    static const int rf_command_registered_##fn = ::rf::cli::register_command(name, fn)
