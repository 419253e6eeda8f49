// Tests for issue 23's one writer of named outputs (src/io/output_file.hpp), the shell quoting
// of printed commands (src/io/shell_quote.hpp), the UTF-8 check of free-text config keys, the
// directory lock (src/run/run_lock.hpp) and metrics.csv's checked appends. Full disks, file-size
// limits and signals are process-level: tests/machinery/cli_transactions.sh injects those into the real
// binary.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "config/validate_text.hpp"
#include "io/durable_file.hpp"
#include "io/output_file.hpp"
#include "io/shell_quote.hpp"
#include "train/metrics_log.hpp"
#include "run/run_lock.hpp"

namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
    const fs::path dir = fs::path(RF_BINARY_DIR) / "test_tmp" / "output_file" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}

std::string slurp(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) { return e.what(); }
    return "";
}

const rf::OutputRule kRule{"the test CSV", {}, "move it away"};

}  // namespace

TEST_CASE(
    "output file: a new file is written whole; our own file is replaced, leaving no temporary") {
    const fs::path dir = temp_dir("new");
    const std::string path = (dir / "t.csv").string();
    rf::write_output_file(path, "a,b\n1,2\n", kRule);
    CHECK(slurp(path) == "a,b\n1,2\n");
    rf::write_output_file(path, "a,b\n3,4\n", kRule);
    CHECK(slurp(path) == "a,b\n3,4\n");
    const auto entries = std::distance(fs::directory_iterator(dir), fs::directory_iterator());
    CHECK(entries == 2);  // the file and its .written-by mark, no temporary
}

TEST_CASE(
    "output file: a user's file, a symlink, a directory, a FIFO, a missing directory are refused untouched") {
    const fs::path dir = temp_dir("refuse");
    const std::string path = (dir / "t.csv").string();
    std::ofstream(path) << "my notes\n";
    std::string message = error_of([&] { rf::write_output_file(path, "a,b\n", kRule); });
    CHECK(message.find("nothing shows that roformer wrote it") != std::string::npos);
    CHECK(message.find("move it away") != std::string::npos);
    CHECK(slurp(path) == "my notes\n");

    const std::string target = (dir / "target.txt").string();
    std::ofstream(target) << "a,b\nprecious\n";  // even with our header: a symlink is not ours
    const std::string link = (dir / "link.csv").string();
    fs::create_symlink(target, link);
    message = error_of([&] { rf::write_output_file(link, "a,b\n", kRule); });
    CHECK(message.find("symbolic link") != std::string::npos);
    CHECK(slurp(target) == "a,b\nprecious\n");

    message = error_of([&] { rf::write_output_file(dir.string(), "a,b\n", kRule); });
    CHECK(message.find("is a directory") != std::string::npos);

    const std::string fifo = (dir / "fifo.csv").string();
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    message = error_of([&] { rf::write_output_file(fifo, "a,b\n", kRule); });
    CHECK(message.find("not a regular file") != std::string::npos);

    message =
        error_of([&] { rf::write_output_file((dir / "no" / "t.csv").string(), "a,b\n", kRule); });
    CHECK(message.find("does not exist") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "no"));
}

TEST_CASE("output file: a PNG is ours by the plot script's marker, not by the PNG signature") {
    const fs::path dir = temp_dir("png");
    const rf::OutputRule rule{"curves.png", {"roformer-cpp scripts/plot_curves.py"}, "move it"};
    const std::string path = (dir / "curves.png").string();
    std::ofstream(path, std::ios::binary) << "\x89PNG\r\n\x1a\n...someone else's picture";
    CHECK_THROWS_WITH_AS(rf::check_output_file(path, rule),
                         doctest::Contains("nothing shows that roformer wrote it"),
                         std::runtime_error);
    std::ofstream(path, std::ios::binary) << std::string("\x89PNG\r\n\x1a\n..tEXtSoftware") + '\0' +
                                                 "roformer-cpp scripts/plot_curves.py...";
    CHECK_NOTHROW(rf::check_output_file(path, rule));
    // install_output_file renames a produced file over it; the produced one is gone
    const std::string produced = (dir / "curves.png.tmp-1.png").string();
    std::ofstream(produced, std::ios::binary) << "new picture";
    rf::install_output_file(produced, path, rule);
    CHECK(slurp(path) == "new picture");
    CHECK_FALSE(fs::exists(produced));
}

TEST_CASE("output file: provenance, not format — a user's file in our format, our file edited, "
          "a foreign or false mark are all refused untouched") {
    const fs::path dir = temp_dir("provenance");
    // A user's .npy starts with the same magic bytes as ours: refused.
    const std::string npy = (dir / "weights.npy").string();
    const std::string users = std::string("\x93NUMPY\x01\x00", 8) + "{'descr': '<f4'}\n";
    std::ofstream(npy, std::ios::binary) << users;
    CHECK_THROWS_WITH_AS(rf::write_output_file(npy, "ours", kRule),
                         doctest::Contains("nothing shows that roformer wrote it"),
                         std::runtime_error);
    CHECK(slurp(npy) == users);
    // Ours, written with its mark: replaced again; the mark names the bytes' SHA-256.
    const std::string path = (dir / "t.csv").string();
    rf::write_output_file(path, "a,b\n1,2\n", kRule);
    const std::string mark = slurp(rf::written_by_name(path));
    CHECK(mark == std::string(rf::kOutputOwner) + " wrote t.csv; sha256 " +
                      rf::sha256_hex("a,b\n1,2\n") + "\n");
    CHECK_NOTHROW(rf::write_output_file(path, "a,b\n3,4\n", kRule));
    // Edited by the user since: refused, the edit kept.
    std::ofstream(path, std::ios::app) << "my row\n";
    CHECK_THROWS_WITH_AS(rf::write_output_file(path, "a,b\n5,6\n", kRule),
                         doctest::Contains("changed after roformer wrote it"), std::runtime_error);
    CHECK(slurp(path) == "a,b\n3,4\nmy row\n");
    // A script's mark is not ours; a user's file under the mark's name is never replaced.
    const std::string other = (dir / "o.csv").string();
    std::ofstream(other) << "x\n";
    std::ofstream(rf::written_by_name(other))
        << "roformer-cpp scripts/finetune_table.py wrote o.csv; sha256 " << rf::sha256_hex("x\n")
        << "\n";
    CHECK_THROWS_WITH_AS(rf::write_output_file(other, "y\n", kRule),
                         doctest::Contains("not a mark roformer wrote"), std::runtime_error);
    const std::string fresh = (dir / "new.csv").string();
    std::ofstream(rf::written_by_name(fresh)) << "my notes\n";
    CHECK_THROWS_WITH_AS(rf::write_output_file(fresh, "y\n", kRule),
                         doctest::Contains("not a mark roformer wrote"), std::runtime_error);
    CHECK_FALSE(fs::exists(fresh));
    CHECK(slurp(rf::written_by_name(fresh)) == "my notes\n");
    // SHA-256 itself, against the FIPS 180-2 example "abc".
    CHECK(rf::sha256_hex("abc") ==
          "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST_CASE(
    "output file: a failed write leaves the old file and no temporary (write_file_atomically)") {
    const fs::path dir = temp_dir("fail");
    const std::string path = (dir / "t.csv").string();
    rf::write_output_file(path, "a,b\nold\n", kRule);
    // The temporary's name is taken by a directory: creating it fails, like a full disk would.
    fs::create_directory(rf::temporary_name(path));
    CHECK_THROWS_AS(rf::write_output_file(path, "a,b\nnew\n", kRule), std::runtime_error);
    CHECK(slurp(path) == "a,b\nold\n");
}

TEST_CASE(
    "output file: a file another roformer is writing is refused naming its pid; its lock "
    "file is removed when written, and a user's file under the lock's name is kept") {
    const fs::path dir = temp_dir("lock_file");
    const std::string path = (dir / "t.csv").string();
    const std::string lock = path + ".lock";
    // Another writer: its pid record, flock'ed on another open file description.
    std::ofstream(lock) << "4242\n";
    const int other = ::open(lock.c_str(), O_RDWR | O_CLOEXEC);
    REQUIRE(other >= 0);
    REQUIRE(::flock(other, LOCK_EX | LOCK_NB) == 0);
    CHECK_THROWS_WITH_AS(rf::check_output_file(path, kRule),
                         doctest::Contains("another roformer (pid 4242) is writing it now"),
                         std::runtime_error);
    CHECK_THROWS_AS(rf::write_output_file(path, "a,b\n", kRule), std::runtime_error);
    CHECK_FALSE(fs::exists(path));
    ::close(other);  // it died: its record stays, and the next writer takes it over
    rf::write_output_file(path, "a,b\n1,2\n", kRule);
    CHECK(slurp(path) == "a,b\n1,2\n");
    CHECK_FALSE(fs::exists(lock));
    const auto entries = std::distance(fs::directory_iterator(dir), fs::directory_iterator());
    CHECK(entries == 2);  // the file and its mark
    std::ofstream(lock) << "my notes\n";
    CHECK_THROWS_WITH_AS(rf::write_output_file(path, "a,b\n3,4\n", kRule),
                         doctest::Contains("is not roformer's lock"), std::runtime_error);
    CHECK(slurp(lock) == "my notes\n");
    CHECK(slurp(path) == "a,b\n1,2\n");
}

TEST_CASE(
    "output file: a kill between the file's rename and its mark's is finished by the next "
    "writer, never refused as changed") {
    const fs::path dir = temp_dir("journal");
    const std::string path = (dir / "t.csv").string();
    rf::write_output_file(path, "a,b\nold\n", kRule);
    // What a writer killed between the two renames leaves: the new bytes in place, the old
    // mark beside them, and its lock file recording what it was publishing.
    std::ofstream(path, std::ios::trunc) << "a,b\nnew\n";
    std::ofstream(path + ".lock") << "999999\npublishing " << rf::sha256_hex("a,b\nnew\n") << "\n";
    rf::check_output_file(path, kRule);
    CHECK(slurp(rf::written_by_name(path)).find(rf::sha256_hex("a,b\nnew\n")) != std::string::npos);
    rf::write_output_file(path, "a,b\nnewer\n", kRule);
    CHECK(slurp(path) == "a,b\nnewer\n");
    CHECK_FALSE(fs::exists(path + ".lock"));
    // A journal whose bytes never reached the file (killed before the first rename) repairs
    // nothing: the file is still the old one its mark names.
    std::ofstream(path + ".lock") << "999999\npublishing " << rf::sha256_hex("other") << "\n";
    rf::write_output_file(path, "a,b\nlast\n", kRule);
    CHECK(slurp(path) == "a,b\nlast\n");
}

TEST_CASE(
    "output file: a name whose mark's temporary would be too long is refused before "
    "anything is written") {
    const fs::path dir = temp_dir("long_name");
    const std::string path = (dir / (std::string(236, 'x') + ".csv")).string();  // 240 bytes
    CHECK_THROWS_WITH_AS(rf::check_output_file(path, kRule), doctest::Contains("NAME_MAX"),
                         std::runtime_error);
    CHECK_THROWS_WITH_AS(rf::write_output_file(path, "a,b\n", kRule),
                         doctest::Contains("give a name of at most"), std::runtime_error);
    CHECK(fs::is_empty(dir));
    // The longest name that fits is written whole, with its mark.
    const std::string longest = (dir / (std::string(228, 'x') + ".csv")).string();
    rf::write_output_file(longest, "a,b\n", kRule);
    CHECK(slurp(longest) == "a,b\n");
    CHECK(fs::exists(rf::written_by_name(longest)));
}

TEST_CASE("shell_quote: every word comes back from /bin/sh exactly as it was") {
    CHECK(rf::shell_quote("runs/tiny") == "runs/tiny");
    CHECK(rf::shell_quote("train.lr=3e-4") == "train.lr=3e-4");
    for (const std::string word :
         {"runs/it's mine", "runs/a;date", "a b", "$HOME", "`id`", "x\"y", "", "new\nline", "*"}) {
        const std::string command = "printf '%s' " + rf::shell_quote(word);
        std::FILE* pipe = ::popen(command.c_str(), "r");
        REQUIRE(pipe != nullptr);
        std::string out;
        char buffer[256];
        for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
        ::pclose(pipe);
        CHECK(out == word);
    }
    CHECK(rf::shell_command({"roformer", "train", "--out", "runs/a;date"}) ==
          "roformer train --out 'runs/a;date'");
}

TEST_CASE("is_valid_utf8: well-formed text passes; stray, overlong, surrogate and cut bytes fail") {
    CHECK(rf::is_valid_utf8("data/kjv.txt"));
    CHECK(rf::is_valid_utf8("données/κείμενο/文本/😀.txt"));
    CHECK_FALSE(rf::is_valid_utf8("k\xffj.txt"));
    CHECK_FALSE(rf::is_valid_utf8("\x80"));              // a continuation byte alone
    CHECK_FALSE(rf::is_valid_utf8("\xc0\xaf"));          // overlong '/'
    CHECK_FALSE(rf::is_valid_utf8("\xed\xa0\x80"));      // a UTF-16 surrogate
    CHECK_FALSE(rf::is_valid_utf8("abc\xe2\x82"));       // cut short
    CHECK_FALSE(rf::is_valid_utf8("\xf4\x90\x80\x80"));  // above U+10FFFF
}

TEST_CASE("run lock: held on the directory, so deleting the lock file lets no second writer in") {
    const fs::path dir = temp_dir("lock");
    const std::string run = (dir / "run").string();
    {
        const rf::RunLock first = rf::RunLock::acquire(run);
        CHECK(rf::RunLock::holder(run) == std::to_string(::getpid()));
        fs::remove(fs::path(run) / rf::RunLock::kFileName);
        // flock is per open file description: a second open in this process conflicts too
        CHECK_FALSE(rf::RunLock::try_acquire(run).has_value());
        CHECK_THROWS_WITH_AS(rf::RunLock::acquire(run), doctest::Contains("is in use by pid"),
                             std::runtime_error);
    }
    CHECK(rf::RunLock::try_acquire(run).has_value());  // released with the first
}

TEST_CASE("run lock: a user's `lock` file and a symlinked one are refused, never written") {
    const fs::path dir = temp_dir("lock_user");
    const fs::path run = dir / "run";
    fs::create_directories(run);
    std::ofstream(run / "lock") << "my notes\n";
    CHECK_FALSE(rf::RunLock::is_lock_record(run.string()));
    CHECK_THROWS_WITH_AS(rf::RunLock::acquire(run.string()),
                         doctest::Contains("is not roformer's lock record"), std::runtime_error);
    CHECK(slurp(run / "lock") == "my notes\n");
    fs::remove(run / "lock");
    std::ofstream(dir / "target") << "precious\n";
    fs::create_symlink(dir / "target", run / "lock");
    CHECK_THROWS_AS(rf::RunLock::acquire(run.string()), std::runtime_error);
    CHECK(slurp(dir / "target") == "precious\n");
}

// A file-size limit set inside the test process makes appends fail with EFBIG (SIGXFSZ
// ignored, as roformer's main does) — a full disk on demand, then room again.
TEST_CASE(
    "metrics.csv: a refused append is kept, continued where it stopped, and commit() fails while it cannot be written") {
    const fs::path dir = temp_dir("metrics");
    const std::string path = (dir / "metrics.csv").string();
    const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit old_limit {};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &old_limit) == 0);
    std::ostringstream warnings;
    {
        rf::MetricsLog log(path, false, 0, warnings);
        rf::MetricsRow row;
        for (size_t step = 1; step <= 3; ++step) {
            row.step = step;
            log.append(row);
        }
        const auto size = fs::file_size(path);
        // room for half a row more: the next append is cut inside its row
        struct rlimit tight = old_limit;
        tight.rlim_cur = size + 20;
        REQUIRE(::setrlimit(RLIMIT_FSIZE, &tight) == 0);
        for (size_t step = 4; step <= 6; ++step) {
            row.step = step;
            log.append(row);
        }
        CHECK(warnings.str().find("warning: cannot append to") != std::string::npos);
        CHECK(fs::file_size(path) == size + 20);  // a row cut short, the rest pending
        CHECK_THROWS_WITH_AS(log.commit(), doctest::Contains("File too large"), std::runtime_error);
        REQUIRE(::setrlimit(RLIMIT_FSIZE, &old_limit) == 0);  // room again
        row.step = 7;
        log.append(row);
        CHECK_NOTHROW(log.commit());
    }
    std::signal(SIGXFSZ, old_handler);
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);  // the header
    size_t expected = 1;
    while (std::getline(in, line)) {
        CHECK(line.rfind(std::to_string(expected) + ",", 0) == 0);  // no gap, no garbled row
        CHECK(std::count(line.begin(), line.end(), ',') == 8);
        ++expected;
    }
    CHECK(expected == 8);
}
