// io — the one way a command writes a named output file (see docs/training.md,
// "What every command guarantees").
//
// Every file a command writes — summary.md, curves.csv, extrapolation.csv, a plot, a DOT
// graph, an attention .csv/.npy — is written as a transaction:
//   1. the bytes go to "<path>.tmp-<pid>"; every write, the flush and the fsync are checked
//   2. the temporary is renamed over <path> and the directory fsync'd (durable_file.hpp)
// so <path> holds either what it held before or the complete new file, never a mix, and a
// full disk, a file-size limit or a missing directory is a one-line error naming the file
// (the caller's command then exits non-zero).
//
// A file already at <path> is replaced only if it is the command's own: its first bytes must
// be one of the signatures the caller names (a format header such as the CSV's header line,
// or a marker the command writes). A user's notes, script or picture under that name are
// refused with a message, never overwritten. Directories, FIFOs and devices are refused too.
#pragma once

#include <string>
#include <vector>

namespace rf {

struct OutputRule {
    // What the file is, for messages: "summary.md", "the DOT graph", …
    std::string what;
    // An existing file is replaced only when it starts with one of these (empty: only a new
    // file may be written — an existing one is always refused).
    std::vector<std::string> ours;
    // Or: an existing file is ours when its first 1 KiB holds one of these (a PNG's text chunk).
    std::vector<std::string> markers;
    // The fix the refusal suggests ("move it away or pick another --out").
    std::string fix = "move it away or pick another --out";
};

// Refuses (std::runtime_error, one line) what write_output_file would refuse — a directory,
// a non-regular file, a file that is not ours, a parent directory that does not exist —
// without writing anything. Call it before hours of work that end in the write.
void check_output_file(const std::string& path, const OutputRule& rule);

// check_output_file, then bytes → temporary → fsync → rename over `path`.
void write_output_file(const std::string& path, const std::string& bytes, const OutputRule& rule);

// For a file another program produced (the plot script): check_output_file on `path`, then
// renames `produced` (a file in the same directory, fsync'd here) over it. `produced` is
// removed on failure.
void install_output_file(const std::string& produced, const std::string& path,
                         const OutputRule& rule);

}  // namespace rf
