// Runs a test program under the grader's limits (run_limited.hpp).
//
// POSIX: the program leads a process group of its own; at the time or output limit the whole
// group gets SIGKILL, and so does whatever is left of it when the program ends. Its output goes
// to a file, so a descendant that keeps it open holds nobody. On Linux the grader is also the
// "subreaper" of what the program starts: a grandchild that left the group (setsid()) and
// outlives the program is handed to the grader, which ends it too.
// Windows: the program runs in a job object, ended whole (TerminateJobObject), so its
// descendants go with it.
#include "run_limited.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#ifdef _WIN32
#include <windows.h>
#else
#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <dirent.h>
#include <fstream>
#include <sys/prctl.h>
#endif
#endif

namespace grader {

namespace {
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
    return std::chrono::duration<double>(Clock::now() - t0).count();
}
bool over(const Limits& limits, Clock::time_point t0) {
    return limits.seconds > 0 && seconds_since(t0) > limits.seconds;
}
}  // namespace

#ifdef _WIN32

namespace {
std::string quoted(const std::string& arg) {  // CommandLineToArgvW's rules
    if (!arg.empty() && arg.find_first_of(" \t\"") == std::string::npos) return arg;
    std::string out = "\"";
    size_t backslashes = 0;
    for (char c : arg) {
        if (c == '\\') { ++backslashes; continue; }
        if (c == '"') out.append(2 * backslashes + 1, '\\');
        else out.append(backslashes, '\\');
        backslashes = 0;
        out += c;
    }
    out.append(2 * backslashes, '\\');
    return out + "\"";
}
}  // namespace

Outcome run_limited(const std::vector<std::string>& argv,
                    const std::vector<std::pair<std::string, std::string>>& env,
                    const std::string& output_file, const Limits& limits) {
    Outcome o;
    SECURITY_ATTRIBUTES sa{sizeof(sa), nullptr, TRUE};
    HANDLE out = CreateFileA(output_file.c_str(), GENERIC_WRITE,
                             FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, &sa,
                             CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
    if (out == INVALID_HANDLE_VALUE) {
        o.error = "cannot write " + output_file;
        return o;
    }
    HANDLE in = CreateFileA("NUL", GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE, &sa,
                            OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL, nullptr);
    HANDLE job = CreateJobObjectA(nullptr, nullptr);
    JOBOBJECT_EXTENDED_LIMIT_INFORMATION info{};
    info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    SetInformationJobObject(job, JobObjectExtendedLimitInformation, &info, sizeof(info));
    for (const auto& [name, value] : env) SetEnvironmentVariableA(name.c_str(), value.c_str());
    std::string command;
    for (const std::string& a : argv) command += (command.empty() ? "" : " ") + quoted(a);
    STARTUPINFOA si{};
    si.cb = sizeof(si);
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = in;
    si.hStdOutput = out;
    si.hStdError = out;
    PROCESS_INFORMATION pi{};
    const BOOL ok = CreateProcessA(nullptr, command.data(), nullptr, nullptr, TRUE,
                                   CREATE_SUSPENDED, nullptr, nullptr, &si, &pi);
    for (const auto& env_pair : env) SetEnvironmentVariableA(env_pair.first.c_str(), nullptr);
    if (!ok) {
        o.error = "cannot start " + argv[0];
        CloseHandle(out);
        CloseHandle(in);
        CloseHandle(job);
        return o;
    }
    AssignProcessToJobObject(job, pi.hProcess);
    ResumeThread(pi.hThread);
    o.started = true;
    const auto t0 = Clock::now();
    for (;;) {
        if (WaitForSingleObject(pi.hProcess, 10) == WAIT_OBJECT_0) break;
        LARGE_INTEGER size{};
        if (over(limits, t0)) o.timed_out = true;
        else if (limits.max_output > 0 && GetFileSizeEx(out, &size) &&
                 size.QuadPart > limits.max_output)
            o.too_much_output = true;
        if (o.timed_out || o.too_much_output) {
            TerminateJobObject(job, 1);
            WaitForSingleObject(pi.hProcess, INFINITE);
            break;
        }
    }
    TerminateJobObject(job, 1);  // whatever it started and left behind
    DWORD code = 0;
    GetExitCodeProcess(pi.hProcess, &code);
    if (!o.timed_out && !o.too_much_output) {
        o.exited = true;
        o.exit_code = static_cast<int>(code);
        o.crash_code = code >= 0xC0000000u;
    }
    CloseHandle(pi.hThread);
    CloseHandle(pi.hProcess);
    CloseHandle(job);
    CloseHandle(out);
    CloseHandle(in);
    return o;
}

std::string signal_name(int code) {
    char text[16];
    std::snprintf(text, sizeof(text), "0x%08X", static_cast<unsigned>(code));
    return text;
}

#else  // POSIX

namespace {
#ifdef __linux__
// The grader's adopted descendants (parent = us, not one we are waiting for): killed and
// reaped, round after round, as their own children are handed to us in turn. Returns how many
// were still running.
int end_adopted() {
    int ended = 0;
    for (int round = 0; round < 50; ++round) {
        bool found = false;
        if (DIR* proc = opendir("/proc")) {
            while (dirent* e = readdir(proc)) {
                const pid_t p = static_cast<pid_t>(std::atoi(e->d_name));
                if (p <= 0) continue;
                std::ifstream stat(std::string("/proc/") + e->d_name + "/stat");
                std::string text((std::istreambuf_iterator<char>(stat)), {});
                const size_t close = text.rfind(')');
                if (close == std::string::npos) continue;
                char state = 0;
                long parent = 0;
                if (std::sscanf(text.c_str() + close + 1, " %c %ld", &state, &parent) != 2)
                    continue;
                if (parent != getpid()) continue;
                found = true;
                if (state != 'Z') ++ended;  // a zombie has ended already: only reaped
                kill(p, SIGKILL);
                waitpid(p, nullptr, 0);
            }
            closedir(proc);
        }
        if (!found) return ended;
    }
    return ended;
}
#else
int end_adopted() { return 0; }
#endif
}  // namespace

Outcome run_limited(const std::vector<std::string>& argv,
                    const std::vector<std::pair<std::string, std::string>>& env,
                    const std::string& output_file, const Limits& limits) {
    Outcome o;
#ifdef __linux__
    static const bool subreaper = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
    (void)subreaper;
#endif
    const int fd = open(output_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        o.error = "cannot write " + output_file + ": " + std::strerror(errno);
        return o;
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        o.error = std::string("cannot start a process: ") + std::strerror(errno);
        close(fd);
        return o;
    }
    if (pid == 0) {
        setpgid(0, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        const int null_in = open("/dev/null", O_RDONLY);
        if (null_in >= 0) dup2(null_in, 0);
        for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
        if (limits.max_output > 0) {  // a write past the limit ends it (SIGXFSZ): the file stays bounded
            const rlim_t bytes = static_cast<rlim_t>(limits.max_output) + 1;
            struct rlimit most{bytes, bytes};
            setrlimit(RLIMIT_FSIZE, &most);
        }
        execv(args[0], args.data());
        const char* why = "grader: cannot start the test program\n";
        ssize_t ignored = write(2, why, std::strlen(why));
        (void)ignored;
        _exit(127);
    }
    setpgid(pid, pid);  // also here: no window in which a limit would miss the group
    close(fd);
    o.started = true;
    const auto t0 = Clock::now();
    int status = 0;
    for (;;) {
        const pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid) break;
        if (r < 0 && errno != EINTR) {
            o.error = std::string("waiting for the test program: ") + std::strerror(errno);
            break;
        }
        struct stat st{};
        if (over(limits, t0)) o.timed_out = true;
        else if (limits.max_output > 0 && stat(output_file.c_str(), &st) == 0 &&
                 st.st_size > limits.max_output)
            o.too_much_output = true;
        if (o.timed_out || o.too_much_output) {
            kill(-pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    o.left_running = end_adopted();  // what it started and left behind, handed to us
    kill(-pid, SIGKILL);              // and what is left of its group
    end_adopted();
    if (!o.timed_out && !o.too_much_output && o.error.empty()) {
        if (WIFEXITED(status)) {
            o.exited = true;
            o.exit_code = WEXITSTATUS(status);
        } else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ) {
            o.too_much_output = true;
        } else if (WIFSIGNALED(status)) {
            o.signal = WTERMSIG(status);
        }
    }
    return o;
}

std::string signal_name(int signal) {
    switch (signal) {
        case SIGABRT: return "SIGABRT";
        case SIGSEGV: return "SIGSEGV";
        case SIGBUS: return "SIGBUS";
        case SIGFPE: return "SIGFPE";
        case SIGILL: return "SIGILL";
        case SIGKILL: return "SIGKILL";
        case SIGTERM: return "SIGTERM";
        case SIGINT: return "SIGINT";
        default: return "signal " + std::to_string(signal);
    }
}

#endif

}  // namespace grader
