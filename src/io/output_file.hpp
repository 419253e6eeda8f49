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
// A file already at <path> is replaced only when the program can prove it wrote it — provenance,
// not format (a user's .npy starts with the same magic bytes as ours):
//   * beside every file it writes, write_output_file leaves "<path>.written-by", one line
//     "roformer-cpp roformer wrote NAME; sha256 HEX" with the SHA-256 of the bytes written —
//     the same mark, in the same format, as the Python scripts' text outputs
//     (scripts/script_outputs.py). The file stays ours while its bytes still hash to HEX; a
//     file the user edited since, or one with no such mark, is refused;
//   * a picture a plot script drew is ours by the script's own mark in the PNG (`markers`).
// A user's notes, script or picture under that name are refused with a message, never
// overwritten; so is a "<path>.written-by" that is not such a mark. Directories, FIFOs and
// devices are refused too. docs/training.md, "What every command guarantees", says it for users.
#pragma once

#include <string>
#include <vector>

namespace rf {

struct OutputRule {
    // What the file is, for messages: "summary.md", "the DOT graph", …
    std::string what;
    // For a file another program draws (install_output_file): an existing file is ours when
    // its first 1 KiB holds one of these (a PNG's text chunk naming the plot script). Empty:
    // ours only by the .written-by mark write_output_file leaves.
    std::vector<std::string> markers;
    // The fix the refusal suggests ("move it away or pick another --out").
    std::string fix = "move it away or pick another --out";
};

// Refuses (std::runtime_error, one line) what write_output_file would refuse — a directory,
// a non-regular file, a file that is not ours, a parent directory that does not exist —
// without writing anything. Call it before hours of work that end in the write.
void check_output_file(const std::string& path, const OutputRule& rule);

// check_output_file, then bytes → temporary → fsync → rename over `path`, then its mark
// "<path>.written-by" the same way.
void write_output_file(const std::string& path, const std::string& bytes, const OutputRule& rule);

// The mark's name beside `path`, and the owner it names for this program's files.
std::string written_by_name(const std::string& path);
inline constexpr const char* kOutputOwner = "roformer-cpp roformer";

// The SHA-256 of `bytes`, 64 lower-case hex digits (OpenSSL's libcrypto).
std::string sha256_hex(const std::string& bytes);

// For a file another program produced (the plot script): check_output_file on `path`, then
// renames `produced` (a file in the same directory, fsync'd here) over it. `produced` is
// removed on failure.
void install_output_file(const std::string& produced, const std::string& path,
                         const OutputRule& rule);

}  // namespace rf
