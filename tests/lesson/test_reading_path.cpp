// The reading path (docs/reading-path.md) kept true by the build: the files and line ranges a
// student reads to follow one training step of the classroom model exist, stay within
// 2 000 listed lines, start where the document says, and the core's and the data's files on
// it include no header of a machinery room (what the path must list is measured from the real
// program: scripts/reading_path.sh, the ctest reading_path_ran); and the code as a whole keeps
// the house rules the path relies on (no file over 400 lines, no plan, MPI or profiler name in
// a core file).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const fs::path kSource = RF_SOURCE_DIR;
constexpr size_t kMaxLines = 2000, kMaxFileLines = 400;

// The rooms a first reading skips: the machinery that plugs into the core. A file of the core
// or the data on the path that includes one of their headers has machinery in plain sight. The
// loop's files on the path (src/train/, src/run/) are where the rooms are wired in, and are
// not held to this.
const std::set<std::string> kMachineryRooms = {"fast", "inspect", "run", "dist", "assembly",
                                               "finetune", "experiments", "cli", "linear"};

std::vector<std::string> read_lines(const fs::path& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

struct Entry {
    std::string file;           // relative to the repository
    size_t first = 0, last = 0;  // 1-based, inclusive; 0, 0 = the whole file
    std::string anchor;         // text the first line of a range contains ("" for a whole file)
};

// Table rows between the document's begin / end markers:
//   | step | `path` | all or A–B | `anchor` or — | what to look for |
std::vector<Entry> reading_path() {
    const std::vector<std::string> lines = read_lines(kSource / "docs" / "reading-path.md");
    std::vector<Entry> entries;
    bool inside = false;
    const std::regex row(R"(^\|\s*\d+\s*\|\s*`([^`]+)`\s*\|\s*([^|]+?)\s*\|\s*([^|]*?)\s*\|)");
    const std::regex range(R"(^(\d+)\s*(?:–|-)\s*(\d+)$)");
    for (const std::string& line : lines) {
        if (line.find("<!-- reading-path:begin -->") != std::string::npos) inside = true;
        if (line.find("<!-- reading-path:end -->") != std::string::npos) inside = false;
        std::smatch m;
        if (!inside || !std::regex_search(line, m, row)) continue;
        Entry e;
        e.file = m[1];
        const std::string lines_text = m[2];
        std::smatch r;
        if (lines_text != "all") {
            REQUIRE_MESSAGE(std::regex_match(lines_text, r, range),
                            e.file << ": lines must be 'all' or 'A–B', got '" << lines_text << "'");
            e.first = std::stoul(r[1]);
            e.last = std::stoul(r[2]);
            std::string anchor = m[3];
            if (anchor.size() >= 2 && anchor.front() == '`' && anchor.back() == '`')
                anchor = anchor.substr(1, anchor.size() - 2);
            e.anchor = anchor;
        }
        entries.push_back(e);
    }
    return entries;
}

std::vector<fs::path> every_source_file() {
    std::vector<fs::path> out;
    for (const auto& f : fs::recursive_directory_iterator(kSource / "src"))
        if (f.is_regular_file() && (f.path().extension() == ".cpp" || f.path().extension() == ".hpp"))
            out.push_back(f.path());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST_CASE("reading path: the listed lines exist, start at their anchors and fit the budget") {
    const std::vector<Entry> entries = reading_path();
    REQUIRE(entries.size() >= 10);  // the table was found and read
    std::set<std::string> files;
    size_t total = 0;
    for (const Entry& e : entries) {
        CAPTURE(e.file);
        const fs::path path = kSource / e.file;
        REQUIRE(fs::exists(path));
        const std::vector<std::string> lines = read_lines(path);
        if (e.first == 0) {
            total += lines.size();
        } else {
            REQUIRE(e.first >= 1);
            REQUIRE(e.first <= e.last);
            REQUIRE(e.last <= lines.size());
            CAPTURE(lines[e.first - 1]);
            CHECK_MESSAGE(!e.anchor.empty(), "a range needs the text its first line contains");
            CHECK_MESSAGE(lines[e.first - 1].find(e.anchor) != std::string::npos,
                          "line " << e.first << " no longer starts the range: update the table");
            total += e.last - e.first + 1;
        }
        files.insert(e.file);
    }
    MESSAGE("reading path: " << total << " listed lines in " << files.size() << " files");
    CHECK(total <= kMaxLines);
}

TEST_CASE("reading path: no listed file of the core or the data includes a machinery room") {
    std::set<std::string> files;
    for (const Entry& e : reading_path())
        if (e.file.rfind("src/train/", 0) != 0 && e.file.rfind("src/run/", 0) != 0)
            files.insert(e.file);
    REQUIRE(files.size() >= 10);
    const std::regex include(R"(^#include "([a-z_]+)/)");
    for (const std::string& file : files) {
        CAPTURE(file);
        for (const std::string& line : read_lines(kSource / file)) {
            std::smatch m;
            if (std::regex_search(line, m, include)) {
                CAPTURE(line);
                CHECK(kMachineryRooms.count(m[1]) == 0);
            }
            for (const char* name : {"ExecutionPlan", "dist::", "profile::", "MPI_"}) {
                CAPTURE(std::string(name));
                CHECK(line.find(name) == std::string::npos);
            }
        }
    }
}

TEST_CASE("house rules: every source file is under 400 lines") {
    for (const fs::path& file : every_source_file()) {
        CAPTURE(file.string());
        CHECK(read_lines(file).size() <= kMaxFileLines);
    }
}
