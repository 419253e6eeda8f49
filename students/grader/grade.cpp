// The grader (docs/graded-tasks.md): one C++ program, built by the lesson build beside the
// tasks' tests, so that grading needs nothing but CMake and a C++ compiler on any laptop — no
// bash, no GNU tool. scripts/grade.sh (POSIX sh) and scripts/grade.cmd (Windows) build it and
// hand it their arguments; it runs in the repository's top folder.
//
//   grade                         the tasks: what to write, which tests grade it
//   grade TASK... | all           grade students/tasks/<task>.cpp
//   grade --hint TASK             the next, deeper level of the hint for TASK's last failure
//   grade --build                 build every task's tests (./install.sh), grade nothing
//   grade --reference TASK...|all the course's own implementation (course repository only)
//   grade --grade-file TASK FILE [--report CSV]
//                                 grade FILE as TASK (the class table's regrade; --check)
//   grade --check-grading         every stub fails and names its failing test; every wrong
//                                 solution of tests/grader/wrong/ fails with its hint; the
//                                 course's implementation passes (course repository only)
//   grade --fingerprint FILE...   the fingerprint lines of students/pristine.txt
//
// A grade: the chosen file becomes the task's graded function (build-student/graded/<task>.cpp,
// one #include line), the task's test program is built (cmake --build) and run under a time and
// an output limit (run_limited.cpp) with its record (reporter.cpp), and the score is read from
// that record and the exit status (record.cpp). The files the build reads are checked before and
// after each run: a handout's against students/pristine.txt, and any file a run changed is put
// back and the grade is 0 ("tampered"). In a handout each grade appends a line to
// students/grades.csv (commit it with your work): the instructor's class table reads it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "record.hpp"
#include "run_limited.hpp"

namespace fs = std::filesystem;
using grader::Outcome;
using grader::TaskResult;

namespace {

// ---- settings --------------------------------------------------------------------------------
const std::string kTasks = "students/tasks.txt";
const std::string kHints = "students/hints.txt";
const std::string kPristine = "students/pristine.txt";
const std::string kGrades = "students/grades.csv";
std::string build_dir = "build-student";
std::string jobs = "2";
double time_limit = 60;
long long max_output = 1000000;
// GRADE_BUILD=0: run the test programs as they are built (a cross build graded on the machine
// it targets, such as MinGW's under Wine), without CMake.
bool prebuilt = false;

[[noreturn]] void fail(const std::string& message) {
    std::cerr << "grade: " << message << "\n";
    std::exit(2);
}

std::string read_file(const std::string& path) {  // "" when it is no regular file
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return "";
    try {
        std::ifstream in(path, std::ios::binary);
        std::ostringstream s;
        s << in.rdbuf();
        return s.str();
    } catch (const std::exception&) {  // a read error (libstdc++ throws it from the buffer)
        return "";
    }
}
bool write_if_changed(const std::string& path, const std::string& text) {
    if (fs::exists(path) && read_file(path) == text) return false;
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << text;
    return true;
}
std::vector<std::string> split(const std::string& text, const std::string& sep) {
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t at; (at = text.find(sep, start)) != std::string::npos; start = at + sep.size())
        out.push_back(text.substr(start, at - start));
    out.push_back(text.substr(start));
    return out;
}
std::vector<std::string> lines_of(const std::string& path) {
    std::vector<std::string> out;
    std::istringstream in(read_file(path));
    for (std::string line; std::getline(in, line);) {
        if (!line.empty() && line.back() == '\r') line.pop_back();  // a CRLF checkout
        out.push_back(line);
    }
    return out;
}
std::string absolute(const std::string& path) { return fs::absolute(path).generic_string(); }

// ---- the tasks (students/tasks.txt) and the hints (students/hints.txt) ----------------------
struct Task {
    std::string name, host, program, tests, cases, what;
    std::vector<std::string> calls;  // the other graded tasks its tests run
};
std::vector<Task> all_tasks;

const Task& task_named(const std::string& name) {
    for (const Task& t : all_tasks)
        if (t.name == name) return t;
    std::string names;
    for (const Task& t : all_tasks) names += " " + t.name;
    fail("no task '" + name + "'; the tasks:" + names);
}

struct Hint {
    std::string task, id, pattern;
    std::vector<std::string> levels;
};
std::vector<Hint> hints;

void read_tables() {
    const std::regex row("^([a-z_]+|[*]) [|] .*");
    for (const std::string& line : lines_of(kTasks)) {
        if (!std::regex_match(line, row)) continue;
        const std::vector<std::string> f = split(line, " | ");
        if (f.size() != 6 && f.size() != 7) fail(kTasks + ": a task line has 6 or 7 fields: " + line);
        all_tasks.push_back({f[0], f[1], f[2], f[3], f[4], f[5], {}});
        if (f.size() == 7) all_tasks.back().calls = split(f[6], ",");
    }
    if (all_tasks.empty()) fail(kTasks + " lists no task: is this the course or a handout's top folder?");
    for (const std::string& line : lines_of(kHints)) {
        if (!std::regex_match(line, row)) continue;
        std::vector<std::string> f = split(line, " | ");
        if (f.size() < 4) fail(kHints + ": a hint line is task | id | pattern | hint [| deeper …]: " + line);
        hints.push_back({f[0], f[1], f[2], std::vector<std::string>(f.begin() + 3, f.end())});
    }
}

// A pattern: POSIX extended regular expressions joined by " && ", each of which must match,
// or, written !RE, must not.
bool holds(const std::string& pattern, const std::string& text) {
    for (std::string term : split(pattern, " && ")) {
        const bool negated = !term.empty() && term[0] == '!';
        if (negated) term.erase(0, 1);
        const bool found = std::regex_search(text, std::regex(term, std::regex::extended));
        if (found == negated) return false;
    }
    return true;
}
const Hint* hint_for(const std::string& task, const TaskResult& r) {
    const std::string text = r.matched_text();
    if (text.empty()) return nullptr;
    for (const Hint& h : hints)
        if ((h.task == task || h.task == "*") && holds(h.pattern, text)) return &h;
    return nullptr;
}

// The hint levels a student asked for (--hint), kept in the build folder: "last TASK ID" (the
// hint of TASK's last grade) and "asked ID LEVEL".
std::map<std::string, std::string> last_hint;
std::map<std::string, int> asked_level;
std::string hint_state() { return build_dir + "/hint-levels.txt"; }
void read_hint_state() {
    for (const std::string& line : lines_of(hint_state())) {
        const std::vector<std::string> f = split(line, " ");
        if (f.size() == 3 && f[0] == "last") last_hint[f[1]] = f[2];
        if (f.size() == 3 && f[0] == "asked") asked_level[f[1]] = std::atoi(f[2].c_str());
    }
}
void write_hint_state() {
    std::string text;
    for (const auto& [task, id] : last_hint) text += "last " + task + " " + id + "\n";
    for (const auto& [id, level] : asked_level) text += "asked " + id + " " + std::to_string(level) + "\n";
    write_if_changed(hint_state(), text);
}

// ---- where we are ------------------------------------------------------------------------
bool in_handout() { return fs::exists("students/handout.txt"); }
std::vector<std::string> handed_out() {  // the tasks to list and grade
    if (!in_handout()) {
        std::vector<std::string> names;
        for (const Task& t : all_tasks) names.push_back(t.name);
        return names;
    }
    std::vector<std::string> names;
    for (const std::string& line : lines_of("students/handout.txt"))
        if (!line.empty()) names.push_back(line);
    return names;
}
void course_only(const std::string& what) {
    if (in_handout())
        fail("this is a handout: the reference answers are not in it (" + what +
             " needs the course repository)");
}

// ---- the files the build reads, kept as the handout (or the course) has them -----------------
// A fingerprint of a text file, its line ends read as LF (a Windows checkout's CRLF is the same
// file): 64-bit FNV-1a. It catches a change, accidental or casual; the instructor's class table
// regrades every student's files against the course's own tests for the rest.
std::string fingerprint(const std::string& path) {
    unsigned long long h = 1469598103934665603ull;
    for (char c : read_file(path)) {
        if (c == '\r') continue;
        h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    }
    char hex[17];
    std::snprintf(hex, sizeof(hex), "%016llx", h);
    return hex;
}
// Which files: a handout's record; in the course, the lesson's own list and the lists beside it.
std::vector<std::string> guarded_files() {
    std::vector<std::string> files;
    if (in_handout()) {
        for (const std::string& line : lines_of(kPristine))
            if (line.size() > 18) files.push_back(line.substr(18));
        return files;
    }
    for (const std::string& line : lines_of("students/lesson_files.txt"))
        if (line.compare(0, 4, "src/") == 0 || line.compare(0, 6, "tests/") == 0) files.push_back(line);
    for (const char* f : {"students/CMakeLists.txt", "students/graded_region.cmake",
                          "students/tasks.txt", "students/hints.txt"})
        files.push_back(f);
    return files;
}
std::map<std::string, std::string> snapshot;  // path → its text before a run
void take_snapshot() {
    snapshot.clear();
    for (const std::string& f : guarded_files()) snapshot[f] = read_file(f);
}
// The files a run changed, each put back.
std::vector<std::string> put_back_changed() {
    std::vector<std::string> changed;
    for (const auto& [path, text] : snapshot) {
        if (read_file(path) == text) continue;
        changed.push_back(path);
        std::ofstream(path, std::ios::binary) << text;
    }
    return changed;
}
// A handout's files that differ from the handout's record (or the record gone).
std::vector<std::string> differing_from_handout() {
    std::vector<std::string> differ;
    if (!in_handout()) return differ;
    if (!fs::exists(kPristine)) return {kPristine + " (missing)"};
    for (const std::string& line : lines_of(kPristine)) {
        if (line.size() <= 18) continue;
        const std::string path = line.substr(18);
        if (!fs::exists(path) || fingerprint(path) != line.substr(0, 16)) differ.push_back(path);
    }
    return differ;
}

// ---- building ------------------------------------------------------------------------------
std::string program_path(const std::string& name) {
    for (const std::string& dir : {build_dir, build_dir + "/Release", build_dir + "/Debug"})
        for (const char* ext : {"", ".exe"})
            if (fs::exists(dir + "/" + name + ext)) return dir + "/" + name + ext;
    return build_dir + "/" + name;
}
bool cmake_build(const std::string& target, const std::string& log) {
    std::vector<std::string> argv = {GRADER_CMAKE, "--build", build_dir, "--config", "Release", "-j", jobs};
    if (!target.empty()) argv.insert(argv.end(), {"--target", target});
    const Outcome o = grader::run_limited(argv, {}, log, {});
    if (o.exited && o.exit_code == 0) return true;
    int shown = 0;
    for (const std::string& line : lines_of(log))
        if ((line.find("error") != std::string::npos || line.find("Error") != std::string::npos) &&
            shown++ < 20)
            std::cerr << line << "\n";
    return false;
}
// The task's graded function for this grade: build-student/graded/TASK.cpp includes FILE.
void choose(const std::string& task, const std::string& file) {
    write_if_changed(build_dir + "/graded/" + task + ".cpp", "#include \"" + absolute(file) + "\"\n");
}
// The course's implementation of a task: its marked region alone (graded_region.cmake), its
// lines numbered as in the file that holds it; in a handout, the student's file.
std::string ours(const Task& t) {
    if (in_handout() || !fs::exists(t.host)) return "students/tasks/" + t.name + ".cpp";
    const std::string out = build_dir + "/ours/" + t.name + ".cpp";
    fs::create_directories(build_dir + "/ours");
    const Outcome o = grader::run_limited(
        {GRADER_CMAKE, "-DMODE=ours", "-DTASK=" + t.name, "-DIN=" + t.host, "-DOUT=" + out + ".new",
         "-DLINE_FILE=" + absolute(t.host), "-P", "students/graded_region.cmake"},
        {}, build_dir + "/ours/" + t.name + ".log", {});
    if (!o.exited || o.exit_code != 0) fail("cutting the region of " + t.name + " from " + t.host + " failed");
    write_if_changed(out, read_file(out + ".new"));
    fs::remove(out + ".new");
    return out;
}

// ---- one grade -----------------------------------------------------------------------------
TaskResult grade(const Task& task, const std::string& mode, std::string file) {
    TaskResult r;
    const std::vector<std::string> differ = differing_from_handout();
    if (!differ.empty()) {
        r.status = "tampered";
        r.why = "the handout's tests or the code they build changed: " + differ.front() +
                (differ.size() > 1 ? " and " + std::to_string(differ.size() - 1) + " more" : "") +
                " — put them back (git checkout -- src tests scripts students) and grade again";
        return r;
    }
    if (file.empty()) file = mode == "reference" ? ours(task) : "students/tasks/" + task.name + ".cpp";
    if (!fs::exists(file)) {
        r.status = "compile";
        r.why = file + " does not exist (scripts/grade.sh lists the tasks)";
        return r;
    }
    const std::string log = build_dir + "/" + task.name + "." + mode + ".log";
    if (prebuilt) {
        std::ofstream(log, std::ios::binary) << "GRADE_BUILD=0: the test program as it was built\n";
    } else {
        for (const Task& t : all_tasks) choose(t.name, t.name == task.name ? file : ours(t));
    }
    if (!prebuilt && !cmake_build("test_" + task.name, log)) {
        r.status = "compile";
        r.why = "does not compile; the errors are above (the whole output: " + log + ")";
        return r;
    }
    const std::string record = build_dir + "/" + task.name + "." + mode + ".record";
    const std::string output = build_dir + "/" + task.name + "." + mode + ".out";
    fs::remove(record);
    take_snapshot();
    const Outcome o = grader::run_limited(
        {absolute(program_path("test_" + task.name)), "--no-version", "--reporters=console,grader",
         "-tc=" + task.cases},
        {{"RF_GRADER_RECORD", absolute(record)},
         {"ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1:print_legend=0"},
         {"UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1:abort_on_error=1"}},
        output, {time_limit, max_output});
    const std::vector<std::string> changed = put_back_changed();
    if (!o.started) fail(o.error);
    std::vector<std::string> graded = {file};
    for (const Task& t : all_tasks) graded.push_back(t.host);
    r = grader::read_run(record, output, o, time_limit, max_output, graded,
                         fs::current_path().generic_string() + "/");
    if (o.left_running > 0)
        r.why += std::string(r.why.empty() ? "" : "; ") + "its tests left " +
                 std::to_string(o.left_running) + " process(es) running after they ended, ended by the grader";
    if (!changed.empty()) {
        r.status = "tampered";
        r.passed = r.failed = -1;
        r.why = "the tests' run changed " + changed.front() +
                (changed.size() > 1 ? " and " + std::to_string(changed.size() - 1) + " more" : "") +
                ", a file the grade is built from (put back as it was): graded 0";
        r.failures.insert(r.failures.begin(),
                          {"(the run)", "grader: ERROR: the run changed " + changed.front() +
                                            ", a file of the tests or the code they build"});
    }
    std::ofstream(log, std::ios::app) << read_file(output);
    // In a handout the tasks it calls are the student's too: one that fails its own tests is
    // named as the bug first.
    if (!r.passes() && mode == "student" && in_handout()) {
        const std::vector<std::string> out = handed_out();
        for (const std::string& called : task.calls) {
            if (std::find(out.begin(), out.end(), called) == out.end()) continue;
            const TaskResult c = grade(task_named(called), "student", "");
            if (c.passes()) continue;
            r.failures.insert(r.failures.begin(),
                              {"(" + called + ", which its tests run)", "grader: ERROR: " + task.name + "'s tests run your " +
                                                          called + ", which fails its own tests"});
        }
        if (!prebuilt)
            for (const Task& t : all_tasks) choose(t.name, t.name == task.name ? file : ours(t));
    }
    return r;
}

// ---- the console ---------------------------------------------------------------------------
std::string cut(const std::string& line) {  // at most 150 characters (UTF-8 counted as such)
    size_t chars = 0, i = 0;
    for (; i < line.size(); ++i)
        if ((static_cast<unsigned char>(line[i]) & 0xC0) != 0x80 && ++chars > 149) break;
    return i < line.size() ? line.substr(0, i) + "…" : line;
}
std::string score_words(const TaskResult& r) {
    if (r.passes()) return "1/1";
    if (r.status == "compile") return "0/1 (does not compile)";
    if (r.status == "crash") return "0/1 (crashed)";
    if (r.status == "timeout") return "0/1 (never finished)";
    if (r.status == "output") return "0/1 (printed without end)";
    if (r.status == "early_exit") return "0/1 (ended before its summary)";
    if (r.status == "killed") return "0/1 (killed)";
    if (r.status == "tampered") return "0/1 (tests changed)";
    return "0/1";
}
std::string count(int n) { return n < 0 ? "-" : std::to_string(n); }
void print_row(const std::string& task, const TaskResult& r) {
    char row[200];
    std::snprintf(row, sizeof(row), "%-20s %-8s %-8s %s", task.c_str(), count(r.passed).c_str(),
                  count(r.failed).c_str(), score_words(r).c_str());
    std::cout << row << std::endl;  // a log read while it grows sees each task at once
}
// Each failing test case by name, the first two also with their first failed check; then ONE
// hint, at the deepest level asked for (--hint). Returns the hint shown and its level.
std::pair<const Hint*, int> teach(const std::string& task, const TaskResult& r) {
    if (!r.why.empty()) std::cerr << task << ": " << r.why << "\n";
    int shown = 0;
    for (const grader::Failure& f : r.failures) {
        std::cout << "  ✗ " << cut(f.test) << "\n";
        if (shown++ >= 2) continue;
        std::istringstream lines(f.text);
        int logged = 0;  // at most five logged lines
        for (std::string line; std::getline(lines, line);) {
            const bool is_logged = line.find("  logged: ") == 0 || (logged > 0 && line.find("          ") == 0);
            if (is_logged && ++logged > 5) continue;
            std::cout << "      " << cut(line) << "\n";
        }
    }
    const Hint* h = r.status == "compile" || r.status == "output" ? nullptr : hint_for(task, r);
    if (!h) return {nullptr, 0};
    const int levels = static_cast<int>(h->levels.size());
    const int level = std::min(std::max(asked_level[h->id], 1), levels);
    std::cout << "  hint: " << h->levels[level - 1] << "\n";
    if (levels > 1)
        std::cout << "  (hint level " << level << " of " << levels
                  << (level < levels ? "; the next: scripts/grade.sh --hint " + task : "") << ")\n";
    return {h, level};
}

// ---- the student's record: students/grades.csv ----------------------------------------------
std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}
std::string compiler() {
#if defined(__clang__)
    std::string v = "Clang " __clang_version__;
    while (!v.empty() && v.back() == ' ') v.pop_back();
    return v;
#elif defined(__GNUC__)
    return "GNU " + std::to_string(__GNUC__) + "." + std::to_string(__GNUC_MINOR__) + "." +
           std::to_string(__GNUC_PATCHLEVEL__);
#elif defined(_MSC_VER)
    return "MSVC " + std::to_string(_MSC_VER);
#else
    return "unknown";
#endif
}
std::string os() {
#if defined(_WIN32)
    return "Windows";
#elif defined(__APPLE__)
    return "Darwin";
#elif defined(__linux__)
    return "Linux";
#else
    return "other";
#endif
}
void append_grade(const std::string& csv, const std::string& task, const TaskResult& r,
                  const Hint* hint, int level) {
    const bool fresh = !fs::exists(csv);
    std::ofstream out(csv, std::ios::app | std::ios::binary);
    if (!out) fail("cannot append to " + csv);
    if (fresh) out << "time_utc,task,score,passed,failed,status,failing_test,hint_id,hint_level,compiler,os\n";
    char when[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
    const std::vector<std::string> f = {
        when, task, r.passes() ? "1" : "0", r.passed < 0 ? "" : std::to_string(r.passed),
        r.failed < 0 ? "" : std::to_string(r.failed), r.status,
        r.failures.empty() ? "" : r.failures.front().test, hint ? hint->id : "",
        std::to_string(level), compiler(), os()};
    for (size_t i = 0; i < f.size(); ++i) out << (i ? "," : "") << csv_field(f[i]);
    out << "\n";
}

// Grades the tasks and prints the table; 0 when every one passes.
int run(const std::string& mode, const std::vector<std::string>& names, const std::string& report) {
    char head[100];
    std::snprintf(head, sizeof(head), "\n%-20s %-8s %-8s %s", ("task (" + mode + ")").c_str(),
                  "passed", "failed", "score");
    std::cout << head << "\n";
    int full = 0;
    for (const std::string& name : names) {
        const Task& task = task_named(name);
        const TaskResult r = grade(task, mode, "");
        print_row(name, r);
        std::cout.flush();
        const auto [hint, level] = teach(name, r);
        if (r.passes()) full++;
        last_hint[name] = hint ? hint->id : "";
        if (!report.empty()) append_grade(report, name, r, hint, level);
    }
    write_hint_state();
    std::cout << "score: " << full << " of " << names.size()
              << " tasks pass all their tests (the logs: " << build_dir << "/<task>." << mode
              << ".log)\n";
    return full == static_cast<int>(names.size()) ? 0 : 1;
}

void list_tasks() {
    std::cout << "Graded tasks (students/tasks.txt). Write students/tasks/<task>.cpp, then: "
                 "scripts/grade.sh <task>\n\n";
    for (const std::string& name : handed_out()) {
        const Task& t = task_named(name);
        char line[600];
        std::snprintf(line, sizeof(line), "  %-19s %s\n  %-19s graded by %s, test cases \"%s\"\n\n",
                      t.name.c_str(), t.what.c_str(), "", t.tests.c_str(), t.cases.c_str());
        std::cout << line;
    }
    std::cout << "Stuck? scripts/grade.sh --hint <task> shows a deeper hint for the last failure.\n";
}

// --hint TASK: the next level of the hint of TASK's last grade, logged in students/grades.csv.
int next_hint(const std::string& task) {
    task_named(task);
    const std::string id = last_hint.count(task) ? last_hint[task] : "";
    const Hint* h = nullptr;
    for (const Hint& candidate : hints)
        if (candidate.id == id) h = &candidate;
    if (!h) {
        std::cout << "grade: no hint for " << task
                  << " yet: grade it first (scripts/grade.sh " << task
                  << "); a task that passes, or has not failed with a hint, has none\n";
        return 1;
    }
    const int levels = static_cast<int>(h->levels.size());
    const int level = std::min(std::max(asked_level[id], 1) + 1, levels);
    asked_level[id] = level;
    write_hint_state();
    std::cout << task << ", hint level " << level << " of " << levels << ": " << h->levels[level - 1]
              << "\n";
    if (level == levels && levels > 1) std::cout << "(the last level)\n";
    if (in_handout()) {
        TaskResult r;
        r.status = "hint";
        append_grade(kGrades, task, r, h, level);
    }
    return 0;
}

// ---- the course's checks (--check-grading) -------------------------------------------------
std::string header_value(const std::string& file, const std::string& key) {
    for (const std::string& line : lines_of(file))
        if (line.compare(0, key.size(), key) == 0) return line.substr(key.size());
    return "";
}
int check_grading() {
    course_only("--check");
    int bad = 0;
    std::vector<std::string> names = handed_out();
    std::cout << "\nthe stubs as committed (each must fail and name its failing test):\n";
    for (const std::string& name : names) {
        const TaskResult r = grade(task_named(name), "student", "");
        print_row(name, r);
        const auto shown = teach(name, r);
        (void)shown;
        if (r.passed < 0) std::cout << "FAIL: the stub of " << name << " gives no count (" << r.status << ")\n", bad = 1;
        else if (r.failed == 0) std::cout << "FAIL: the stub of " << name << " passes its tests (they grade nothing)\n", bad = 1;
        else if (r.failures.empty()) std::cout << "FAIL: the stub of " << name << " fails, but no test case is named\n", bad = 1;
    }
    std::cout << "\nthe wrong solutions of tests/grader/wrong/ (each must score 0 and show its hint):\n";
    std::vector<std::string> wrong;
    for (const auto& e : fs::directory_iterator("tests/grader/wrong"))
        if (e.path().extension() == ".cpp") wrong.push_back(e.path().generic_string());
    std::sort(wrong.begin(), wrong.end());
    for (const std::string& file : wrong) {
        const std::string base = fs::path(file).stem().string();
        const std::string task = base.substr(0, base.find('.'));
        const std::string expected = header_value(file, "// expected hint: ");
        const std::string status = header_value(file, "// expected status: ");
        const std::string limit = header_value(file, "// grade timeout: ");
        const std::string within = header_value(file, "// grade within: ");
        const double saved = time_limit;
        const auto t0 = std::chrono::steady_clock::now();
        if (!limit.empty()) time_limit = std::atof(limit.c_str());
        std::ostringstream console;
        std::streambuf* old = std::cout.rdbuf(console.rdbuf());
        std::streambuf* old_err = std::cerr.rdbuf(console.rdbuf());
        const TaskResult r = grade(task_named(task), "student", file);
        const auto shown = teach(task, r);
        std::cout.rdbuf(old);
        std::cerr.rdbuf(old_err);
        time_limit = saved;
        const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const std::string hint = shown.first ? shown.first->id : "(none)";
        if (r.passes()) {
            std::cout << "FAIL: " << file << " is not caught (" << r.passed << " passed)\n";
            bad = 1;
        } else if (!status.empty() && r.status != status) {
            std::cout << "FAIL: " << file << " is graded '" << r.status << "', not '" << status << "'; the console:\n" << console.str();
            bad = 1;
        } else if (!within.empty() && took > std::atof(within.c_str())) {
            std::cout << "FAIL: grading " << file << " took " << took << " s, more than " << within << " s\n";
            bad = 1;
        } else if (hint != expected) {
            std::cout << "FAIL: grading " << file << " shows the hint " << hint << ", not " << expected << "; the console:\n" << console.str();
            bad = 1;
        } else {
            std::cout << "  " << base << ": caught (" << r.status << "), hint " << hint << std::endl;
        }
    }
    std::cout << "\nthe course's implementation (every test must pass):\n";
    const int reference = run("reference", names, "");
    if (reference != 0) {
        std::cout << "FAIL: the course's implementation does not pass every test\n";
        bad = 1;
    }
    if (bad == 0)
        std::cout << "grade --check-grading: PASS (" << names.size() << " stubs fail and name their tests; "
                  << wrong.size() << " wrong solutions score 0 with their hints; the reference passes)\n";
    return bad;
}

}  // namespace

int main(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (const char* b = std::getenv("GRADE_BUILD_DIR")) build_dir = b;
    jobs = std::to_string(std::max(1u, std::thread::hardware_concurrency()));
    if (const char* j = std::getenv("JOBS")) jobs = j;
    if (const char* t = std::getenv("GRADE_TIMEOUT")) {
        time_limit = std::atof(t);
        if (!(time_limit >= 1)) fail(std::string("GRADE_TIMEOUT must be a number of seconds ≥ 1, got '") + t + "'");
    }
    if (const char* m = std::getenv("GRADE_MAX_OUTPUT")) {
        max_output = std::atoll(m);
        if (max_output < 1) fail(std::string("GRADE_MAX_OUTPUT must be a number of bytes ≥ 1, got '") + m + "'");
    }
    if (const char* b = std::getenv("GRADE_BUILD")) prebuilt = std::string(b) == "0";
    read_tables();
    read_hint_state();
    const std::string first = args.empty() ? "list" : args[0];
    if (first == "list" || first == "-h" || first == "--help") {
        list_tasks();
        return 0;
    }
    if (first == "--hint") {
        if (args.size() != 2) fail("--hint takes one task: scripts/grade.sh --hint TASK");
        return next_hint(args[1]);
    }
    if (first == "--build") {
        for (const Task& t : all_tasks) choose(t.name, "students/tasks/" + t.name + ".cpp");
        std::cout << "grade: building the lesson's code and every task's tests in " << build_dir << "\n";
        if (!cmake_build("", build_dir + "/build.log")) fail("the build failed; its output: " + build_dir + "/build.log");
        return 0;
    }
    if (first == "--fingerprint") {
        for (size_t i = 1; i < args.size(); ++i) std::cout << fingerprint(args[i]) << "  " << args[i] << "\n";
        return 0;
    }
    if (first == "--check-grading") return check_grading();
    if (first == "--grade-file") {
        if (args.size() != 3 && !(args.size() == 5 && args[3] == "--report"))
            fail("usage: scripts/grade.sh --grade-file TASK FILE [--report CSV]");
        const TaskResult r = grade(task_named(args[1]), "student", args[2]);
        print_row(args[1], r);
        const auto [hint, level] = teach(args[1], r);
        if (args.size() == 5) append_grade(args[4], args[1], r, hint, level);
        return r.passes() ? 0 : 1;
    }
    std::string mode = "student";
    if (first == "--reference") {
        course_only("--reference");
        mode = "reference";
        args.erase(args.begin());
    }
    if (!args.empty() && args[0][0] == '-') fail("unknown option '" + args[0] + "'; scripts/grade.sh --help");
    if (args.empty() || (args.size() == 1 && args[0] == "all")) args = handed_out();
    for (const std::string& name : args) task_named(name);
    return run(mode, args, mode == "student" && in_handout() ? kGrades : "");
}
