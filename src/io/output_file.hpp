// Room — io: the one way a command writes a named output file (see docs/training.md,
// "What every command guarantees").
//
// Every file a command writes — summary.md, curves.csv, extrapolation.csv, a plot, a DOT
// graph, an attention .csv/.npy — is one transaction, the same protocol as a directory's
// (run/staged_directory.hpp):
//   1. check   every name the write will make ("<path>", "<path>.written-by", their
//              temporaries, "<path>.lock") fits the directory's NAME_MAX and PATH_MAX — before
//              the work, so a long --out never leaves a file without its mark
//   2. lock    an flock on "<path>.lock" (below), held from the check before the work until
//              the publish; of N writers started at once one goes on, the others are refused
//              in one line naming the holder's pid
//   3. stage   the bytes and the mark go to "<path>.tmp-<pid>" and
//              "<path>.written-by.tmp-<pid>"; every write, the flush and the fsync are checked
//   4. verify  the staged file is read back and must hash as written
//   5. publish the lock file records "publishing <hash>", fsync'd; the file, then the mark,
//              are renamed into place; the lock file is removed
// So <path> holds what it held before or the complete new file, never a mix; a full disk, a
// file-size limit or a missing directory is a one-line error naming the file (the caller's
// command then exits non-zero), and every file beside it is what it was.
//
// Why a separate lock file and not the mark: the mark is replaced by a rename, so an flock on
// it would hold the old inode while the new one is free. "<path>.lock" is created by the first
// writer and removed by the holder as it lets go; a writer that waited on a removed one sees
// that its name now names another inode and starts again. It is the holder's pid record
// (digits only; a user's file of that name is refused, never removed) and, between the two
// renames of step 5, the publication's journal: after a SIGKILL there, the next writer finds
// "publishing <hash>" with the file already hashing to it, and finishes the mark — the pair
// never stays a file whose mark names other bytes. Ctrl-C, SIGTERM or SIGHUP during the work
// remove the lock file as the command stops; a SIGKILL leaves at most this small record, which
// the next writer of the name takes over and removes. The kernel drops the flock of a dead
// holder, so nothing ever waits on it.
//
// A file inside a directory this process holds locked (compare's, extrapolate's, a staging
// directory: io/locked_directory.hpp) is excluded from other writers by that lock; its lock
// file exists only for the publish, as the journal.
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
// overwritten; so is a "<path>.written-by" that is not such a mark. Directories, FIFOs,
// devices and symlinks are refused too. docs/training.md, "What every command guarantees",
// says it for users.
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

// Steps 1 and 2, then refuses (std::runtime_error, one line) what write_output_file would
// refuse — a name too long, a directory, a non-regular file, a file that is not ours, a parent
// directory that does not exist, a file another roformer is writing — without writing anything
// but the lock file, which it keeps until write_output_file / install_output_file publishes
// (or the process ends). Every command that takes an output file calls it with its options,
// before hours of work that end in the write.
void check_output_file(const std::string& path, const OutputRule& rule);

// check_output_file (the lock it took, or a new one), then steps 3 to 5.
void write_output_file(const std::string& path, const std::string& bytes, const OutputRule& rule);

// Step 1 alone: every name made from `path` fits the NAME_MAX of its directory (pathconf)
// and PATH_MAX. `patterns` are those names, NAME standing for path's last component and
// <pid> for a pid ("NAME.written-by.tmp-<pid>"); a pattern may go on inside the directory
// NAME makes (".NAME.partial-export-hf-<pid>/config.json"): its part before the '/' is the
// name. Throws std::runtime_error "cannot write <what> '<path>': its name has N bytes, and
// '<pattern>', a name roformer writes beside it, would be over …; give a name of at most M
// bytes". check_output_file and
// check_staged_output_directory call it with the names they make.
void check_output_names(const std::string& path, const std::string& what,
                        const std::vector<std::string>& patterns);

// The up-front check of an --out directory a command creates and writes inside (train,
// finetune, compare), before it creates anything: every part of `dir`, and of the longest of
// `inside` (paths relative to it; "<pid>" stands for a pid), fits NAME_MAX, and dir + "/" + that
// longest path fits PATH_MAX. Throws std::runtime_error, one line naming the limit and the
// path that would pass it; `what` names the option ("--out").
void check_directory_names(const std::string& dir, const std::string& what,
                           const std::vector<std::string>& inside);

// The up-front check of an --out directory that `command` publishes by one rename of a
// staging directory ".NAME.partial-COMMAND-<pid>" beside it (import-hf, export-hf:
// run/staged_directory.hpp), called with the options, before any work and before any
// directory is made: a symlink there is refused (the rename would replace the link, not the
// directory it names), and so is a name whose staging directory's name, or the path of one
// of the files `inside` it (the longest the command writes, temporaries included), would be
// too long.
void check_staged_output_directory(const std::string& dir, const std::string& command,
                                   const std::vector<std::string>& inside);

// The mark's name beside `path`, and the owner it names for this program's files.
std::string written_by_name(const std::string& path);
inline constexpr const char* kOutputOwner = "roformer-cpp roformer";

// The SHA-256 of `bytes`, 64 lower-case hex digits (OpenSSL's libcrypto).
std::string sha256_hex(const std::string& bytes);

// For a file another program produced (the plot script): check_output_file on `path`, then
// renames `produced` (a file in the same directory, fsync'd here) over it, under the lock.
// `produced` is removed on failure.
void install_output_file(const std::string& produced, const std::string& path,
                         const OutputRule& rule);

}  // namespace rf
