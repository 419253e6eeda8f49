// Room — cli: the `roformer` command. Subcommands live in cmd_*.cpp (see commands.hpp).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <iostream>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "cli/bounds.hpp"
#include "cli/commands.hpp"
#include "config/memory_estimate.hpp"
#include "fast/blas_core.hpp"
#include "fast/openmp.hpp"
#include "fast/simd.hpp"
#include "io/platform.hpp"
#include "run/interrupt.hpp"
#include "run/memory_reuse.hpp"
#include "run/threads.hpp"
#include "ropelab/ropelab.hpp"
#include "dist/mpi_communicator.hpp"
#include "train/data_parallel.hpp"

namespace rf::cli {

// A message from the standard library's number parsers ("stoull", "stod") names no file: say
// at least that a saved number was unreadable, and which command read it.
static std::string library_context(const std::string& what, const std::string& command) {
    if (what.rfind("sto", 0) != 0 || what.find(' ') != std::string::npos) return what;
    return "roformer" + command + " read a number it could not parse (" + what +
           ") from a file of the run directory; the file is damaged — check metrics.csv and "
           "the checkpoint, or train again";
}

// The order `roformer --help` and the error messages list the subcommands in: a run's life
// (train, evaluate, use it, look inside it), then the experiments, then the teaching tools.
// Each cmd_*.cpp registers itself; a registered command missing here is listed after these.
static const char* const kCommandOrder[] = {
    "train",    "eval",    "fill-mask",   "generate",   "finetune", "classify",  "attention",
    "tokenize", "import-hf", "export-hf", "compare", "extrapolate", "frequencies", "rope-decay",
    "rope-precision", "base-bound", "graph", "gradcheck",
};

static std::vector<std::pair<const char*, CommandAdder>>& registry() {
    static std::vector<std::pair<const char*, CommandAdder>> commands;
    return commands;
}

int register_command(const char* name, CommandAdder add) {
    registry().emplace_back(name, add);
    return static_cast<int>(registry().size());
}

// The registered commands in kCommandOrder's order (registration order across files is
// unspecified); those not on the list follow, by name.
static std::vector<std::pair<const char*, CommandAdder>> commands_in_order() {
    const auto rank = [](const char* name) {  // its place in kCommandOrder, or past the end
        const auto listed = std::find_if(std::begin(kCommandOrder), std::end(kCommandOrder),
                                         [&](const char* n) { return std::string(n) == name; });
        return listed - std::begin(kCommandOrder);
    };
    auto commands = registry();
    std::sort(commands.begin(), commands.end(), [&](const auto& a, const auto& b) {
        const auto ra = rank(a.first), rb = rank(b.first);
        return ra != rb ? ra < rb : std::string(a.first) < std::string(b.first);
    });
    return commands;
}

// Three settings that libraries read once, when they are loaded — before main — so the only way
// to choose them for the user is to set them and start this program again, once:
// - Idle OpenMP threads should sleep, not spin. Our loops run on libgomp's pool, our matrix
//   products on OpenBLAS's own pthread pool (Debian's libopenblas0-pthread); by default
//   libgomp's workers spin for a while after every parallel loop, on the very cores the BLAS
//   workers need next, and two threads on two cores ran 1.4× slower than one; with
//   OMP_WAIT_POLICY=passive they ran 1.4–1.5× faster than one (README, Performance,
//   "Threads": 10 700 tokens/s on one thread, 7 600 and 15 100–15 800 on two). Not at once,
//   though: a worker that spins briefly (GOMP_SPINCOUNT = rf::kSpinCount, run/threads.hpp)
//   catches the next of the fast path's many short parallel loops without the cost of waking.
// - OpenBLAS's kernel set: on a CPU newer than its tables it runs generic SSE3 kernels
//   (OPENBLAS_CORETYPE picks another; the rule and its measurements: src/fast/blas_core.hpp).
// - OpenBLAS's own threads: its pthreads build starts one worker per core when it loads, and
//   they wait beside our OpenMP threads. The fast path holds BLAS to one thread (our loops
//   split the products; src/fast/threading.cpp), so the library starts with one
//   (OPENBLAS_NUM_THREADS=1) and creates workers only if the composed path asks for them.
// A value the user set is left alone; if the restart fails, we carry on with the libraries'
// defaults. The restarted process finds the variables set and does not restart again. execv
// keeps the process id, so the pid a shell got from `roformer train &` is the one that holds
// the run's lock and takes its signals. Returns false (after one error line) on a bad
// RF_BLAS_CORE.
static bool restart_with_library_settings(char** argv) {
    bool restart = false;
    if (std::getenv("OMP_WAIT_POLICY") == nullptr) {
        restart = setenv("OMP_WAIT_POLICY", "passive", 1) == 0;
        if (std::getenv("GOMP_SPINCOUNT") == nullptr)
            restart = setenv("GOMP_SPINCOUNT", rf::kSpinCount, 1) == 0 || restart;
    }
    if (std::getenv("OPENBLAS_NUM_THREADS") == nullptr)
        restart = setenv("OPENBLAS_NUM_THREADS", "1", 1) == 0 || restart;
    std::string core;
    try {
        core = rf::blas_core_restart();
    } catch (const std::invalid_argument& e) {
        std::cerr << "error: " << e.what() << "\n";
        return false;
    }
    const bool switch_core = !core.empty() && rf::prepare_blas_core_restart(core);
    if (restart || switch_core) rf::platform::restart_this_program(argv);  // returns if it failed
    if (switch_core) {  // the library keeps its own core; say so in the run log, not "switched"
        unsetenv("OPENBLAS_CORETYPE");
        unsetenv("RF_BLAS_CORE_WAS");
    }
    return true;
}

// OpenBLAS starts its worker threads in its constructor, as it is loaded — before main, so
// before the restart above can set OPENBLAS_NUM_THREADS. Under a tight `ulimit -v` a worker's
// stack does not fit, and OpenBLAS ends the process (SIGINT's exit status, 130) before the
// address-space check of the command (config/memory_estimate.hpp) could say so in one line.
// An ELF executable's .preinit_array runs before any shared library's constructor, but before
// the C library's too, which then resets the environment to the one the process started with:
// so under an address-space limit, with OPENBLAS_NUM_THREADS unset, this program starts itself
// again at once with the value the restart would set (1), the same pid, no library having run.
// (Not on macOS, whose loader has no such array: there the restart alone sets it.)
// Nothing here runs before the C library but a loop, getrlimit and execve; a sanitizer's build
// (whose own .preinit_array entry starts its runtime, and which cannot run under `ulimit -v`
// anyway) leaves it out.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define RF_SANITIZED_BUILD 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define RF_SANITIZED_BUILD 1
#endif
#if defined(__ELF__) && !defined(RF_SANITIZED_BUILD)
static void one_blas_thread_at_load(int, char** argv, char** envp) {
    static const char kSetting[] = "OPENBLAS_NUM_THREADS=";
    size_t n = 0;
    for (; envp[n] != nullptr; ++n) {
        size_t k = 0;  // no library call: the C library is not set up yet
        while (k + 1 < sizeof kSetting && envp[n][k] == kSetting[k]) ++k;
        if (k + 1 == sizeof kSetting) return;  // the user's
    }
    rlimit limit{};
    if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY || n > 4000)
        return;
    static char* env[4002];
    static char one[] = "OPENBLAS_NUM_THREADS=1";
    std::copy(envp, envp + n, env);
    env[n] = one;
    env[n + 1] = nullptr;
    ::execve("/proc/self/exe", argv, env);  // returns only if it failed: go on as before
}
__attribute__((section(".preinit_array"), used)) static void (*const kBeforeLibraries)(
    int, char**, char**) = one_blas_thread_at_load;
#endif

// Memory held back for unwinding. When an allocation fails, the new-handler gives this block
// back and lets the allocation try once more; a second failure throws bad_alloc, which then
// unwinds with that room to spare. Without it a destructor that allocates as it unwinds
// (nlohmann's json frees a nested value through a vector of its own) meets a second bad_alloc
// inside noexcept: std::terminate, exit 134 and no error line (a tight ulimit -v; fuzz_cli).
static void* unwind_reserve = nullptr;
static void give_back_unwind_reserve() {
    if (!unwind_reserve) throw std::bad_alloc();
    std::free(unwind_reserve);
    unwind_reserve = nullptr;
}
// false when even this block does not fit: the address space left (ulimit -v) holds no work.
static bool hold_unwind_reserve() {
    unwind_reserve = std::malloc(size_t(1) << 20);
    std::set_new_handler(give_back_unwind_reserve);
    return unwind_reserve != nullptr;
}

// The error line, in one write (the lines of several ranks never interleave). Under mpirun the
// other ranks may be waiting for this one in a collective: MPI_Abort ends them all. Ranks other
// than 0 wait a moment first: when rank 0 fails alike (a bad config fails everywhere), its
// abort ends them and the line shows once.
static void report_error(const std::string& line) {
    if (dist::world_size() > 1 && dist::world_rank() != 0)
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
    (void)!::write(2, line.data(), line.size());
    dist::abort_job(2);
}

// A value option given more than once (CLI11 then says "--config: At Most 1 required but
// received 2"): our own line naming the option and the values, or "" when none was.
static std::string repeated_option(CLI::App& app, const std::string& command) {
    for (CLI::App* sub : app.get_subcommands())
        for (const CLI::Option* option : sub->get_options()) {
            if (option->get_items_expected_max() != 1 || option->results().size() < 2) continue;
            std::string values;
            for (const std::string& v : option->results())
                values += (values.empty() ? "'" : ", '") + v + "'";
            return "roformer" + command + ": " + option->get_name() + " is given " +
                   std::to_string(option->results().size()) + " times (" + values +
                   "); give it once" +
                   (option->get_name() == "--config" ? ", and put further changes in --set KEY=VALUE"
                                                     : "");
        }
    return "";
}

// Parses and runs; every error becomes one line "error: …" and exit code 2. Library errors
// that carry no context of ours get it here, so no bare "stoull" or "bad_alloc" reaches the user.
static int run_guarded(CLI::App& app, int argc, char** argv) {
    const std::string command = argc > 1 ? std::string(" ") + argv[1] : std::string();
    std::ostringstream err;
    try {
        app.parse(argc, argv);
        // Standard output is an output too: a full disk or a closed file under `> out.txt`
        // is an error, not a silent exit 0.
        std::cout.flush();
        if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout))
            throw std::runtime_error("roformer" + command + ": cannot write to standard output (" +
                                     std::strerror(errno ? errno : EIO) +
                                     "); check free space where the output goes");
        return 0;
    } catch (const CLI::ParseError& e) {
        if (e.get_exit_code() == 0) return app.exit(e);  // --help
        // One line, naming the option (CLI11 puts it first) and where the options are listed.
        const bool mismatch = dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr;
        if (const std::string repeated = mismatch ? repeated_option(app, command) : "";
            !repeated.empty())
            err << "error: " << repeated << "\n";
        else
            err << "error: " << e.what() << "; see roformer" << command << " --help\n";
    } catch (const std::bad_alloc&) {
        err << "error: roformer" << command
            << " ran out of memory; use smaller sizes (model.*, data.seq_len, "
               "train.batch_size) or a shorter text\n";
    } catch (const std::filesystem::filesystem_error& e) {
        err << "error: roformer" << command << ": cannot access '" << e.path1().string() << "' ("
            << e.code().message() << "); check the path and its permissions\n";
    } catch (const Interrupted& e) {  // stopped by a signal; it cleaned up as it unwound
        std::cout.flush();
        std::fflush(stdout);
        std::cerr << e.what() << "\n";
        return 128 + e.signal;
    } catch (const RanksDisagree& e) {
        // Every rank found the same difference and throws this same line: rank 0 prints it,
        // every rank exits 2 — no rank waits in a collective, so no MPI_Abort is needed.
        if (dist::world_rank() == 0) std::cerr << "error: " << e.what() << "\n";
        return 2;
    } catch (const std::invalid_argument& e) {
        err << "error: " << library_context(e.what(), command) << "\n";
    } catch (const std::out_of_range& e) {
        err << "error: " << library_context(e.what(), command) << "\n";
    } catch (const std::exception& e) { err << "error: " << e.what() << "\n"; }
    report_error(err.str());
    return 2;
}

// An empty argument never means anything here: an empty --out would be the working
// directory, an empty number 0 to some parsers, an empty text nothing to look at. One rule for
// every option and positional of every command, added after the command's own checks (so an
// option's own advice, e.g. "leave --out out for runs/<config name>", is the one shown).
static void refuse_empty_values(CLI::App& app) {
    for (CLI::App* command : app.get_subcommands({}))
        for (CLI::Option* option : command->get_options()) {
            if (option->get_type_size() == 0) continue;  // a flag (and --help)
            option->check(non_empty(option->get_positional()
                                        ? "give the text"
                                        : "give a value, or leave " + option->get_name() + " out"));
        }
}

}  // namespace rf::cli

int main(int argc, char** argv) {
    // A word the CPU cap does not know would otherwise be ignored: every ISA, silently.
    if (const std::string refusal = rf::max_cpu_isa_refusal(); !refusal.empty()) {
        std::cerr << "error: " << refusal << "\n";
        return 2;
    }
    if (!rf::cli::restart_with_library_settings(argv)) return 2;
    // Each training step frees what the next asks for again: keep it (run/memory_reuse.hpp).
    rf::keep_freed_memory();
    if (!rf::cli::hold_unwind_reserve()) {
        rlimit limit{};
        ::getrlimit(RLIMIT_AS, &limit);
        std::fprintf(stderr,
                     "error: roformer: the libraries, once loaded, fill the address space that "
                     "ulimit -v allows (%llu MiB), with no room to work; raise it "
                     "(ulimit -v unlimited)\n",
                     static_cast<unsigned long long>(limit.rlim_cur >> 20));
        return 2;
    }
    // Under a tight ulimit -v the loops run on the threads whose stacks fit, down to one, so
    // that libgomp never fails to start a worker mid-command (config/memory_estimate.hpp).
    // train and finetune set their own count (train.threads) and check it (apply_threading).
    if (rf::kOpenMP)
        if (const size_t fit = rf::threads_within_address_space(size_t(omp_get_max_threads()));
            fit < size_t(omp_get_max_threads()))
            omp_set_num_threads(int(fit));
    // A file-size limit (ulimit -f) would kill us with SIGXFSZ in the middle of a write; ignored,
    // the write fails with EFBIG instead and the checkpoint commit reports it, the previous
    // checkpoint intact.
    std::signal(SIGXFSZ, SIG_IGN);
    // The RoPE lab (src/ropelab/): scalings, p-RoPE, xPos, learned frequencies, per-layer schemes.
    rf::plug_in_rope_lab(&rf::rope_lab_room());
    // mpirun / srun: MPI first (src/dist/mpi_communicator.hpp); a build without it refuses P > 1.
    if (const std::string refusal = rf::dist::start(&argc, &argv); !refusal.empty()) {
        std::cerr << "error: " << refusal << "\n";
        return 2;
    }
    CLI::App app{"roformer — train and study RoFormer (rotary position embedding) MLMs on a CPU"};
    app.require_subcommand(1);
    std::string names;
    bool known = argc < 2 || argv[1][0] == '-';
    for (const auto& [name, add] : rf::cli::commands_in_order()) {
        add(app);
        names += (names.empty() ? "" : ", ") + std::string(name);
        known = known || std::string(argv[1]) == name;
    }
    rf::cli::refuse_empty_values(app);
    if (argc < 2) {
        std::cerr << "error: no subcommand given; the subcommands are: " << names
                  << " (roformer --help describes them)\n";
        return 2;
    }
    // Under mpirun only train and compare split their work; any other command would run P times.
    if (known && argc >= 2 && rf::dist::world_size() > 1 && std::string(argv[1]) != "train" &&
        std::string(argv[1]) != "compare" && argv[1][0] != '-') {
        if (rf::dist::world_rank() == 0)
            std::cerr << "error: roformer " << argv[1] << " runs in one process; start it without "
                      << "mpirun (only train and compare use several, docs/distributed.md)\n";
        return 2;
    }
    if (!known) {
        std::cerr << "error: unknown subcommand '" << argv[1] << "'; the subcommands are: " << names
                  << " (roformer --help describes them)\n";
        return 2;
    }
    return rf::cli::run_guarded(app, argc, argv);
}
