// Reads a run of a task's tests (record.hpp): the score comes from the test program's record
// (reporter.cpp) and its exit status only; its printed output is read for one thing, what a
// sanitizer said about a crash (the kind of bad access and the line).
#include "record.hpp"

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace grader {

namespace {

std::string read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::vector<std::string> split(const std::string& text, char sep) {
    std::vector<std::string> out;
    std::string field;
    for (char c : text) {
        if (c == sep) {
            out.push_back(field);
            field.clear();
        } else {
            field += c;
        }
    }
    out.push_back(field);
    return out;
}

std::string unescaped(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] != '\\' || i + 1 == s.size()) {
            out += s[i];
            continue;
        }
        const char c = s[++i];
        out += c == 'n' ? '\n' : c == 't' ? '\t' : c;
    }
    return out;
}

std::string relative(std::string path, const std::string& root) {
    while (path.compare(0, 3, "../") == 0) path.erase(0, 3);
    if (!root.empty() && path.compare(0, root.size(), root) == 0) path.erase(0, root.size());
    return path;
}

// The sanitizer's words for a crash: the kind of bad access.
std::string sanitizer_kind(const std::string& out) {
    std::smatch m;
    std::string kind, access;
    if (std::regex_search(out, m, std::regex("SUMMARY: AddressSanitizer: ([a-z-]+)")))
        kind = m[1];
    if (std::regex_search(out, m, std::regex("\n(READ|WRITE) of size"))) access = m[1];
    if (kind.size() >= 15 && kind.compare(kind.size() - 15, 15, "buffer-overflow") == 0)
        return std::string(access == "WRITE" ? "writing" : "reading") +
               " past the end of a buffer (" + kind + ")";
    if (kind == "heap-use-after-free") return "using memory already freed (" + kind + ")";
    if (kind == "stack-overflow") return "a recursion that never ends (" + kind + ")";
    if (kind == "SEGV") return "an access to an address no buffer has (SEGV)";
    if (!kind.empty()) return kind;
    if (std::regex_search(out, m, std::regex(": runtime error: ([^\n]*)"))) return m[1];
    return "";
}

// The line where it happened: the first stack frame in a graded file, else the first frame
// with a file ("FILE:LINE in FUNCTION").
std::string sanitizer_place(const std::string& out, const std::vector<std::string>& graded,
                            const std::string& root) {
    const std::regex frame(R"(^ *#[0-9]+ 0x[0-9a-f]+ in (.*) ((?:/|[A-Za-z]:)[^ ]*:[0-9]+)(?::[0-9]+)?$)");
    const std::regex runtime(R"(^((?:/|[A-Za-z]:)[^ ]*:[0-9]+):[0-9]+: runtime error: .*)");
    std::vector<std::pair<std::string, std::string>> frames;  // (file:line, function)
    std::istringstream lines(out);
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (std::regex_match(line, m, frame)) frames.emplace_back(m[2], m[1]);
        else if (std::regex_match(line, m, runtime)) frames.emplace_back(m[1], "");
    }
    if (frames.empty()) return "";
    auto chosen = frames.front();
    for (const auto& f : frames) {
        bool is_graded = f.first.find("/students/tasks/") != std::string::npos ||
                         f.first.find("/tests/grader/wrong/") != std::string::npos;
        for (const std::string& g : graded)
            if (f.first.find("/" + g + ":") != std::string::npos) is_graded = true;
        if (is_graded) {
            chosen = f;
            break;
        }
    }
    std::string function = chosen.second;
    function = function.substr(0, function.find('('));
    if (function.compare(0, 4, "rf::") == 0) function.erase(0, 4);
    return relative(chosen.first, root) + (function.empty() ? "" : " in " + function);
}

}  // namespace

std::string TaskResult::matched_text() const {
    std::string text;
    for (const Failure& f : failures) text += "\n" + f.test + "\n" + f.text;
    return text;
}

TaskResult read_run(const std::string& record_file, const std::string& output_file,
                    const Outcome& outcome, double time_limit, long long max_output,
                    const std::vector<std::string>& graded_paths, const std::string& root) {
    TaskResult r;
    const std::string out = read_all(output_file);
    std::string test_case, subcase, running, crashed_in;
    std::set<std::string> seen;
    bool summary = false;
    std::istringstream record(read_all(record_file));
    for (std::string line; std::getline(record, line);) {
        std::vector<std::string> f = split(line, '\t');
        for (std::string& field : f) field = unescaped(field);
        const std::string& kind = f[0];
        if (kind == "case" && f.size() > 1) {
            test_case = running = f[1];
            subcase.clear();
        } else if (kind == "sub" && f.size() > 1) {
            subcase = f[1];
        } else if ((kind == "fail" || kind == "crash") && f.size() > 1) {
            const std::string name = test_case + (subcase.empty() ? "" : " / " + subcase);
            if (seen.insert(name).second) r.failures.push_back({name, relative(f[1], root)});
            if (kind == "crash" && f[1].find("CRASHED") != std::string::npos) crashed_in = name;
        } else if (kind == "end") {
            running.clear();
        } else if (kind == "summary" && f.size() == 4) {
            summary = true;
            r.passed = std::stoi(f[2]);
            r.failed = std::stoi(f[3]);
        }
    }
    // A failure of the grader's own making, for the test case that was running.
    auto stopped = [&](const std::string& what) {
        // doctest ends the test case a signal stopped before the record says so: the one it
        // reported as crashed, else the last one started
        const std::string name = !running.empty()        ? running
                                 : !crashed_in.empty()   ? crashed_in
                                 : !summary && !test_case.empty() ? test_case
                                                                  : "(no test case was running)";
        for (Failure& f : r.failures)
            if (f.test == name || f.test.compare(0, name.size() + 3, name + " / ") == 0) {
                f.text = "grader: ERROR: test case CRASHED: " + what;
                return;
            }
        r.failures.push_back({name, "grader: ERROR: test case CRASHED: " + what});
    };
    const std::string where_running = !running.empty() ? running : crashed_in;
    const std::string in_case = where_running.empty() ? "" : " in \"" + where_running + "\"";
    const bool sanitizer = out.find("SUMMARY: AddressSanitizer") != std::string::npos ||
                           out.find("SUMMARY: UndefinedBehaviorSanitizer") != std::string::npos;
    if (outcome.timed_out) {
        r.status = "timeout";
        const std::string limit = std::to_string(static_cast<int>(time_limit));
        r.why = "its tests never finished: stopped after " + limit + " s" + in_case +
                " — a loop that never ends? (GRADE_TIMEOUT sets the limit)";
        stopped("never finished: stopped after " + limit + " s");
    } else if (outcome.too_much_output) {
        r.status = "output";
        r.why = "its tests printed more than " + std::to_string(max_output) +
                " bytes — printing in a loop? (GRADE_MAX_OUTPUT sets the limit)";
    } else if (outcome.signal == 9) {
        r.status = "killed";
        r.why = "its tests were killed (SIGKILL) from outside the grader" + in_case +
                " — out of memory? (the system's OOM killer sends SIGKILL)";
        stopped("killed by SIGKILL from outside the grader");
    } else if (outcome.signal != 0 || outcome.crash_code || sanitizer) {
        const std::string what = sanitizer_kind(out);
        const std::string where = sanitizer_place(out, graded_paths, root);
        const std::string signal =
            outcome.signal ? signal_name(outcome.signal)
                           : outcome.crash_code ? signal_name(outcome.exit_code) : "";
        r.why = "its tests crashed" + in_case + (what.empty() ? "" : ": " + what) +
                (where.empty() ? "" : ", at " + where) +
                (signal.empty() ? "" : " (" + signal + ")");
        std::string short_what = what.substr(0, what.find(" ("));
        if (short_what.empty()) short_what = signal.empty() ? "a sanitizer's report" : signal;
        stopped(short_what + (where.empty() ? "" : " at " + where));
        // doctest still wrote its summary (a crash it caught): the count stands, the crash is
        // one of the failures.
        r.status = summary ? "fail" : "crash";
    } else if (!summary) {
        r.status = "early_exit";
        r.why = "the test program ended" + in_case + " with exit status " +
                std::to_string(outcome.exit_code) +
                " before its summary — does your code call exit() or quick_exit()?";
        stopped("ended early: exit status " + std::to_string(outcome.exit_code) +
                " before the tests' summary");
    } else if (r.failed == 0 && outcome.exit_code != 0) {
        r.status = "fail";
        r.why = "the summary says every test passed, but the program's exit status is " +
                std::to_string(outcome.exit_code);
    } else {
        r.status = (r.failed == 0 && r.passed > 0) ? "pass" : "fail";
    }
    if (r.status == "timeout" || r.status == "output" || r.status == "early_exit" ||
        r.status == "killed" || r.status == "crash") {
        r.passed = r.failed = -1;
    }
    return r;
}

}  // namespace grader
