// Room — data: load a UTF-8 text file and split it into train / validation text.
//
// The split is by contiguous blocks, never by random lines, so validation text is unseen:
//   - blocks are paragraphs separated by blank lines (for data/kjv.txt: whole chapters);
//   - a file with fewer than 2 paragraphs is cut into fixed blocks of up to 20 lines
//     (fewer lines per block for short files, so that there are at least 2 blocks);
//   - block i (0-based) goes to validation iff floor((i+1)·f) > floor(i·f), f = the
//     validation fraction (f = 0.05 → blocks 19, 39, 59, …: every 20th); if that picks no
//     block, the last block is used. Integer arithmetic, no seed: the same file and fraction
//     always give the same split.
// Each split's text is its blocks joined by one blank line ("\n\n").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace rf::data {

// A corpus is held in memory several times over (text, split, ids): 1 GiB of text is the most.
inline constexpr size_t kMaxCorpusBytes = size_t(1) << 30;

// Reads a whole text file. Throws std::runtime_error with a one-line message naming the
// file for: missing/unreadable, a directory, not a regular file (FIFO, device: /dev/zero),
// larger than max_bytes, empty (or only whitespace), binary (contains NUL bytes, or
// more than 10 % of bytes are invalid UTF-8 or control characters). Strips a UTF-8 byte
// order mark and turns CRLF / CR line ends into LF. A few invalid bytes in real text are
// kept (the tokenizers map them to U+FFFD / [UNK]).
std::string read_text_file(const std::string& path, size_t max_bytes = kMaxCorpusBytes);
// The checks and clean-up of read_text_file on bytes already read (`path` names them).
std::string decode_text(std::string raw, const std::string& path);

struct SplitOptions {
    double validation_fraction = 0.05;   // share of blocks sent to validation, in (0, 0.5]
    size_t lines_per_block = 20;         // block size for files without blank lines
    size_t max_bytes = kMaxCorpusBytes;  // larger files are refused (read_text_file)
};

struct CorpusSplit {
    std::string source;      // file path (or a label for in-memory text)
    std::string block_kind;  // "paragraphs" or "lines"
    size_t n_blocks = 0;
    double validation_fraction = 0;         // f of the rule above
    std::vector<size_t> validation_blocks;  // 0-based block indices, ascending
    std::string train_text, validation_text;

    // One line for logs and run directories: the rule, the counts and the validation blocks.
    std::string summary() const;
};

// Splits `text` (already loaded) into blocks and sends them to train or validation.
// Throws std::invalid_argument for a bad fraction and std::runtime_error when the text
// yields fewer than 2 blocks (it names `source`).
CorpusSplit split_corpus(const std::string& text, const SplitOptions& options = {},
                         const std::string& source = "<text>");

// read_text_file + split_corpus.
CorpusSplit load_corpus(const std::string& path, const SplitOptions& options = {});

// The same rule before any tokenising, from the split's byte count: a token covers at least
// one byte (one code point for char, a merge of them for bpe; an invalid byte is one [UNK] or
// U+FFFD), so a split of `n_bytes` has at most `n_bytes` tokens. Throws "… too short …: its
// <split> split has N bytes, so at most N tokens, …" when even that cannot fill one window.
void require_window_fits_bytes(const std::string& source, const std::string& split_name,
                               size_t n_bytes, size_t seq_len, size_t framing_tokens);

// Throws std::runtime_error "… too short …" if a split of `n_tokens` tokens cannot fill one
// window of `seq_len` positions, of which `framing_tokens` are [CLS]/[SEP] (see mlm.hpp).
void require_window_fits(const std::string& source, const std::string& split_name, size_t n_tokens,
                         size_t seq_len, size_t framing_tokens = 2);

}  // namespace rf::data
