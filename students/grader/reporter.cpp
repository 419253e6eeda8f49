// The grader's own record of a test run: a doctest reporter linked into every task's test
// program (students/CMakeLists.txt). The grader (students/grader/grade.cpp) reads its score
// from this record and from the program's exit status, never from what the program printed,
// so a line a student's code prints (a fake "test cases: 9 | 9 passed" summary) counts for
// nothing.
//
// The record goes to the file named by RF_GRADER_RECORD, one event a line, flushed as it is
// written: a crash keeps every event before it. Fields are separated by a tab; a tab, a newline
// or a backslash inside a field is written \t, \n or \\.
//   case NAME            a test case starts (again, for each of its subcases)
//   sub NAME             a subcase starts
//   fail TEXT            a failed check: "FILE:LINE: ERROR: CHECK( … ) is NOT correct!", then
//                        "  values: …" and "  logged: …" lines, as doctest's console shows it
//   crash TEXT           the test case crashed (a signal) or threw
//   end NAME ok|failed   the test case ended
//   summary RUN PASSED FAILED   the run ended: test cases run, passed, failed
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

namespace {

std::string escaped(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '\\') out += "\\\\";
        else if (c == '\t') out += "\\t";
        else if (c == '\n') out += "\\n";
        else if (c != '\r') out += c;
    }
    return out;
}

struct GraderRecord : doctest::IReporter {
    std::FILE* file = nullptr;
    std::string test_case;

    explicit GraderRecord(const doctest::ContextOptions&) {
        if (const char* path = std::getenv("RF_GRADER_RECORD")) file = std::fopen(path, "wb");
    }
    ~GraderRecord() override {
        if (file) std::fclose(file);
    }
    void line(const std::string& kind, const std::string& a = "", const std::string& b = "",
              const std::string& c = "") {
        if (!file) return;
        std::string text = kind;
        for (const std::string* f : {&a, &b, &c})
            if (!f->empty()) text += "\t" + escaped(*f);
        text += "\n";
        std::fputs(text.c_str(), file);
        std::fflush(file);  // a crash keeps every event written so far
    }
    static std::string logged() {  // the INFO/CAPTURE lines in scope, as doctest's "logged:"
        std::string out;
        const int n = get_num_active_contexts();
        for (int i = 0; i < n; ++i) {
            std::ostringstream os;
            get_active_contexts()[i]->stringify(&os);
            out += (i == 0 ? "\n  logged: " : "\n          ") + os.str();
        }
        return out;
    }

    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override { line("start"); }
    void test_run_end(const doctest::TestRunStats& s) override {
        const unsigned run = s.numTestCasesPassingFilters;
        line("summary", std::to_string(run), std::to_string(run - s.numTestCasesFailed),
             std::to_string(s.numTestCasesFailed));
    }
    void test_case_start(const doctest::TestCaseData& t) override {
        test_case = t.m_name;
        line("case", test_case);
    }
    void test_case_reenter(const doctest::TestCaseData& t) override { line("case", t.m_name); }
    void test_case_end(const doctest::CurrentTestCaseStats& s) override {
        line("end", test_case, s.failure_flags ? "failed" : "ok");
    }
    void test_case_exception(const doctest::TestCaseException& e) override {
        line("crash", std::string(e.is_crash ? "ERROR: test case CRASHED: "
                                             : "ERROR: test case THREW exception: ") +
                          e.error_string.c_str());
    }
    void subcase_start(const doctest::SubcaseSignature& s) override {
        line("sub", s.m_name.c_str());
    }
    void subcase_end() override {}
    void log_assert(const doctest::AssertData& a) override {
        if (!a.m_failed) return;
        std::string text = std::string(a.m_file) + ":" + std::to_string(a.m_line) + ": ERROR: " +
                           doctest::assertString(a.m_at) + "( " + a.m_expr + " ) ";
        if (a.m_threw)
            text += "THREW exception: " + std::string(a.m_exception.c_str());
        else
            text += std::string("is NOT correct!\n  values: ") + doctest::assertString(a.m_at) +
                    "( " + a.m_decomp.c_str() + " )";
        line("fail", text + logged());
    }
    void log_message(const doctest::MessageData& m) override {
        if (m.m_severity & doctest::assertType::is_warn) return;
        line("fail", std::string(m.m_file) + ":" + std::to_string(m.m_line) + ": ERROR: " +
                         m.m_string.c_str() + logged());
    }
    void test_case_skipped(const doctest::TestCaseData&) override {}
};

}  // namespace

// Listed by the grader as --reporters=console,grader: the console for the student's log, this
// record for the score.
DOCTEST_REGISTER_REPORTER("grader", 0, GraderRecord);
