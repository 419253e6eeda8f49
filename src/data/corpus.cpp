// Room — data: load a UTF-8 text file and split it into train / validation text
// (the rules are in corpus.hpp).
#include "data/corpus.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "io/read_file.hpp"
#include "data/utf8.hpp"

namespace rf::data {


// The file's size; refuses what is not a regular file, with the reason: a directory, or a
// FIFO / device that could block the reader or never end (/dev/zero).
std::string read_text_file(const std::string& path, size_t max_bytes) {
    return decode_text(read_regular_file(path, "data file", "set data.path to a UTF-8 text file",
                                         max_bytes),
                       path);
}

std::string decode_text(std::string raw, const std::string& path) {
    if (raw.size() >= 3 && raw.compare(0, 3, "\xEF\xBB\xBF") == 0) raw.erase(0, 3);  // BOM
    if (raw.find_first_not_of(" \t\r\n\f\v") == std::string::npos)
        throw std::runtime_error("data file '" + path +
                                 "' is empty; give a UTF-8 text file with some text in it");
    if (raw.find('\0') != std::string::npos)
        throw std::runtime_error("data file '" + path +
                                 "' looks binary (it contains NUL bytes); give a UTF-8 text file");
    size_t control = 0;
    for (const char c : raw) {
        const auto byte = static_cast<unsigned char>(c);
        if ((byte < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v') ||
            byte == 0x7F)
            ++control;
    }
    const size_t suspicious = control + count_invalid_utf8_bytes(raw);
    if (suspicious * 10 > raw.size())
        throw std::runtime_error("data file '" + path + "' looks binary (" +
                                 std::to_string(suspicious) + " of " + std::to_string(raw.size()) +
                                 " bytes are not UTF-8 text); give a UTF-8 text file");
    // CRLF and lone CR → LF, in place (the text only shrinks): one copy of the file in memory
    size_t kept = 0;
    for (size_t i = 0; i < raw.size(); ++i) {
        if (raw[i] == '\r') {
            raw[kept++] = '\n';
            if (i + 1 < raw.size() && raw[i + 1] == '\n') ++i;
        } else {
            raw[kept++] = raw[i];
        }
    }
    raw.resize(kept);
    return raw;
}

// A block as a list of lines (without their '\n'), views into the loaded text: the split
// copies each byte once, into train_text or validation_text (docs/performance.md, "Memory of
// the edges").
using Line = std::string_view;
using Block = std::vector<Line>;

static bool is_blank(Line line) {
    return line.find_first_not_of(" \t\f\v") == Line::npos;
}

static std::vector<Line> split_lines(const std::string& whole) {
    const Line text(whole);
    std::vector<Line> lines;
    size_t start = 0;
    while (start <= text.size()) {
        const size_t end = text.find('\n', start);
        if (end == Line::npos) {
            if (start < text.size()) lines.push_back(text.substr(start));
            break;
        }
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

static std::vector<Block> paragraph_blocks(const std::vector<Line>& lines) {
    std::vector<Block> blocks;
    Block current;
    for (const auto& line : lines) {
        if (is_blank(line)) {
            if (!current.empty()) blocks.push_back(std::move(current));
            current.clear();
        } else {
            current.push_back(line);
        }
    }
    if (!current.empty()) blocks.push_back(std::move(current));
    return blocks;
}

static std::vector<Block> fixed_line_blocks(const std::vector<Line>& lines,
                                            size_t lines_per_block) {
    std::vector<Line> kept;
    for (const auto& line : lines)
        if (!is_blank(line)) kept.push_back(line);
    // at least 2 blocks when there are at least 2 lines
    const size_t per_block = std::max<size_t>(1, std::min(lines_per_block, kept.size() / 2));
    std::vector<Block> blocks;
    for (size_t i = 0; i < kept.size(); i += per_block)
        blocks.emplace_back(kept.begin() + i, kept.begin() + std::min(kept.size(), i + per_block));
    return blocks;
}

static void append_block(std::string& out, const Block& block) {
    if (!out.empty()) out += "\n\n";
    for (size_t i = 0; i < block.size(); ++i) {
        if (i > 0) out += '\n';
        out += block[i];
    }
}

CorpusSplit split_corpus(const std::string& text, const SplitOptions& options,
                         const std::string& source) {
    const double f = options.validation_fraction;
    if (!(f > 0.0 && f <= 0.5))
        throw std::invalid_argument("data.validation_fraction must be in (0, 0.5], got " +
                                    std::to_string(f));
    if (options.lines_per_block == 0)
        throw std::invalid_argument("data.lines_per_block must be at least 1");
    const auto lines = split_lines(text);
    CorpusSplit split;
    split.source = source;
    split.validation_fraction = f;
    auto blocks = paragraph_blocks(lines);
    split.block_kind = "paragraphs";
    if (blocks.size() < 2) {
        blocks = fixed_line_blocks(lines, options.lines_per_block);
        split.block_kind = "lines";
    }
    if (blocks.size() < 2)
        throw std::runtime_error("data file '" + source + "' is too short to split: it has " +
                                 std::to_string(blocks.size()) +
                                 " non-blank line(s); need at least 2 (more for a useful run)");
    split.n_blocks = blocks.size();
    // f as an integer number of millionths, so the rule is exact integer arithmetic
    const auto per_million = static_cast<unsigned long long>(std::llround(f * 1e6));
    for (size_t i = 0; i < blocks.size(); ++i)
        if ((i + 1) * per_million / 1000000 > i * per_million / 1000000)
            split.validation_blocks.push_back(i);
    if (split.validation_blocks.empty()) split.validation_blocks.push_back(blocks.size() - 1);
    // Each split's exact size first, so that neither string grows by doubling past it.
    size_t sizes[2] = {0, 0};  // train, validation
    for (size_t i = 0, next = 0; i < blocks.size(); ++i) {
        const bool is_validation =
            next < split.validation_blocks.size() && split.validation_blocks[next] == i;
        next += is_validation;
        size_t& size = sizes[is_validation];
        size += size ? 2 : 0;  // the "\n\n" between blocks
        for (size_t k = 0; k < blocks[i].size(); ++k) size += blocks[i][k].size() + (k ? 1 : 0);
    }
    split.train_text.reserve(sizes[0]);
    split.validation_text.reserve(sizes[1]);
    size_t next_validation = 0;
    for (size_t i = 0; i < blocks.size(); ++i) {
        const bool is_validation = next_validation < split.validation_blocks.size() &&
                                   split.validation_blocks[next_validation] == i;
        if (is_validation) ++next_validation;
        append_block(is_validation ? split.validation_text : split.train_text, blocks[i]);
    }
    return split;
}

CorpusSplit load_corpus(const std::string& path, const SplitOptions& options) {
    return split_corpus(read_text_file(path, options.max_bytes), options, path);
}

std::string CorpusSplit::summary() const {
    std::ostringstream out;
    out << "source=" << source << " blocks=" << n_blocks << " (" << block_kind << ")"
        << " validation=" << validation_blocks.size() << " blocks, " << validation_text.size()
        << " bytes"
        << " train=" << n_blocks - validation_blocks.size() << " blocks, " << train_text.size()
        << " bytes"
        << " rule=block i is validation iff floor((i+1)f)>floor(if) with f=" << validation_fraction
        << " validation_blocks=";
    const size_t shown = std::min<size_t>(validation_blocks.size(), 100);
    for (size_t k = 0; k < shown; ++k) out << (k ? "," : "") << validation_blocks[k];
    if (shown < validation_blocks.size()) out << ",...";
    return out.str();
}

void require_window_fits(const std::string& source, const std::string& split_name, size_t n_tokens,
                         size_t seq_len, size_t framing_tokens) {
    if (seq_len <= framing_tokens)
        throw std::invalid_argument("seq_len must be greater than " +
                                    std::to_string(framing_tokens) +
                                    " (the [CLS]/[SEP] positions), got " + std::to_string(seq_len));
    const size_t needed = seq_len - framing_tokens;
    if (n_tokens >= needed) return;
    const std::string what = source.empty() ? "the " + split_name + " split is too short: it has "
                                            : "data file '" + source + "' is too short: its " +
                                                  split_name + " split has ";
    throw std::runtime_error(what + std::to_string(n_tokens) +
                             " tokens but one window of seq_len=" + std::to_string(seq_len) +
                             " needs " + std::to_string(needed) +
                             "; use a longer text or a smaller seq_len");
}

}  // namespace rf::data

namespace rf::data {

void require_window_fits_bytes(const std::string& source, const std::string& split_name,
                               size_t n_bytes, size_t seq_len, size_t framing_tokens) {
    if (seq_len <= framing_tokens || n_bytes >= seq_len - framing_tokens) return;
    throw std::runtime_error("data file '" + source + "' is too short: its " + split_name +
                             " split has " + std::to_string(n_bytes) + " bytes, so at most " +
                             std::to_string(n_bytes) + " tokens, but one window of seq_len=" +
                             std::to_string(seq_len) + " needs " +
                             std::to_string(seq_len - framing_tokens) +
                             "; use a longer text or a smaller seq_len");
}

}  // namespace rf::data
