// Room — data: byte-pair encoding (character-level, with [UNK]), training and encoding.
//
// Training (Sennrich et al. 2016, on word counts):
//   1. pretokenize the training text and count each distinct piece (" the" ×52 000, …);
//   2. the alphabet is the code points of the text; each piece starts as its characters;
//   3. repeat until the vocabulary is full: find the adjacent pair (a, b) with the highest
//      count, summed over pieces weighted by their frequency (ties: smaller a, then smaller
//      b), add the token a+b, and replace every (a, b) in every piece that contains it.
//   Pair counts are updated incrementally: only pieces that contain the merged pair are
//   touched (an index pair → pieces), and a max-heap with stale entries skipped on pop
//   finds the best pair. So training on the KJV takes about a second, not minutes.
// Encoding one piece: start from its characters, then repeatedly apply the merge with the
// lowest rank (the earliest learned) among adjacent pairs, until none applies. Pieces are
// cached, so a word is encoded once.
#include <algorithm>
#include <climits>
#include <queue>
#include <stdexcept>

#include "data/tokenizer.hpp"
#include "data/utf8.hpp"

namespace rf::data {

static uint64_t pair_key(int left, int right) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) |
           static_cast<uint32_t>(right);
}
static int key_left(uint64_t key) { return static_cast<int>(key >> 32); }
static int key_right(uint64_t key) { return static_cast<int>(key & 0xFFFFFFFFu); }

BpeTokenizer::BpeTokenizer(std::vector<std::string> vocab,
                           std::vector<std::pair<std::string, std::string>> merges)
    : Tokenizer(std::move(vocab)) {
    std::vector<bool> is_single_char(vocab_.size(), false), made_by_merge(vocab_.size(), false);
    for (size_t id = kNumSpecialTokens; id < vocab_.size(); ++id) {
        const auto cps = decode_utf8(vocab_[id]);
        if (cps.size() == 1) {
            char_ids_[cps[0]] = static_cast<int>(id);
            is_single_char[id] = true;
        }
    }
    for (size_t rank = 0; rank < merges.size(); ++rank) {
        const auto& [left, right] = merges[rank];
        const int a = id_of(left), b = id_of(right), result = id_of(left + right);
        if (a < kNumSpecialTokens || b < kNumSpecialTokens || result < 0)
            throw std::invalid_argument("merge " + std::to_string(rank) + " ('" + left + "' + '" +
                                        right +
                                        "') uses or makes a token that is not in the vocabulary");
        if (!merge_rank_.emplace(pair_key(a, b), static_cast<int>(rank)).second)
            throw std::invalid_argument("merge " + std::to_string(rank) + " ('" + left + "' + '" +
                                        right + "') appears twice");
        merges_.push_back({a, b, result});
        made_by_merge[result] = true;
    }
    for (size_t id = kNumSpecialTokens; id < vocab_.size(); ++id)
        if (!is_single_char[id] && !made_by_merge[id])
            throw std::invalid_argument("token '" + vocab_[id] +
                                        "' is neither one character nor made by a merge");
}

std::vector<std::pair<std::string, std::string>> BpeTokenizer::merge_list() const {
    std::vector<std::pair<std::string, std::string>> list;
    for (const auto& merge : merges_) list.emplace_back(vocab_[merge.left], vocab_[merge.right]);
    return list;
}

// ---- encoding ------------------------------------------------------------------------------

std::vector<int> BpeTokenizer::encode_piece(const std::string& piece) const {
    std::vector<int> symbols;
    size_t length = 0;
    for (size_t pos = 0; pos < piece.size(); pos += length) {
        const auto found = char_ids_.find(decode_one_utf8(piece, pos, length));
        symbols.push_back(found == char_ids_.end() ? kUnkId : found->second);
    }
    std::vector<int> merged;
    while (symbols.size() >= 2) {
        int best_rank = INT_MAX;
        for (size_t i = 0; i + 1 < symbols.size(); ++i) {
            const auto found = merge_rank_.find(pair_key(symbols[i], symbols[i + 1]));
            if (found != merge_rank_.end()) best_rank = std::min(best_rank, found->second);
        }
        if (best_rank == INT_MAX) break;
        const Merge& merge = merges_[best_rank];
        merged.clear();
        for (size_t i = 0; i < symbols.size(); ++i) {
            if (i + 1 < symbols.size() && symbols[i] == merge.left &&
                symbols[i + 1] == merge.right) {
                merged.push_back(merge.result);
                ++i;
            } else {
                merged.push_back(symbols[i]);
            }
        }
        symbols.swap(merged);
    }
    return symbols;
}

void BpeTokenizer::encode_plain(const std::string& text, std::vector<int>& out) const {
    constexpr size_t kMaxCachedPieces = 200000;
    for_each_piece(text, [&](const std::string& piece) {
        std::lock_guard<std::mutex> lock(cache_mutex_);
        auto found = cache_.find(piece);
        if (found == cache_.end()) {
            if (cache_.size() >= kMaxCachedPieces) cache_.clear();
            found = cache_.emplace(piece, encode_piece(piece)).first;
        }
        out.insert(out.end(), found->second.begin(), found->second.end());
    });
}

// ---- training ------------------------------------------------------------------------------

namespace {

struct PairCount {
    int64_t count;
    uint64_t key;
    // std::priority_queue pops the largest: higher count first, then the smaller key
    bool operator<(const PairCount& other) const {
        return count < other.count || (count == other.count && key > other.key);
    }
};

}  // namespace

std::unique_ptr<BpeTokenizer> BpeTokenizer::train(const std::string& text, size_t vocab_size) {
    if (vocab_size <= kNumSpecialTokens)
        throw std::invalid_argument(
            "tokenizer.vocab_size must be greater than 5 (the special tokens), got " +
            std::to_string(vocab_size));
    // 1. distinct pieces and their counts, in a fixed (sorted) order
    std::unordered_map<std::string, int64_t> piece_counts;
    for_each_piece(text, [&](const std::string& piece) { ++piece_counts[piece]; });
    std::vector<std::pair<std::string, int64_t>> words(piece_counts.begin(), piece_counts.end());
    std::sort(words.begin(), words.end());

    // 2. alphabet → the first ids after the specials
    auto vocab = special_vocab();
    std::unordered_map<char32_t, int> char_ids;
    for (const char32_t cp : frequent_code_points(text, vocab_size - kNumSpecialTokens)) {
        char_ids[cp] = static_cast<int>(vocab.size());
        vocab.push_back(encode_utf8(cp));
    }
    std::unordered_map<std::string, int> vocab_index;
    for (size_t id = 0; id < vocab.size(); ++id) vocab_index[vocab[id]] = static_cast<int>(id);

    // 3. each piece as a list of symbols; pair counts and the pieces each pair occurs in
    std::vector<std::vector<int>> symbols(words.size());
    std::unordered_map<uint64_t, int64_t> pair_counts;
    std::unordered_map<uint64_t, std::vector<int>> pair_pieces;
    const auto mergeable = [](int left, int right) { return left != kUnkId && right != kUnkId; };
    for (size_t w = 0; w < words.size(); ++w) {
        for (const char32_t cp : decode_utf8(words[w].first)) {
            const auto found = char_ids.find(cp);
            symbols[w].push_back(found == char_ids.end() ? kUnkId : found->second);
        }
        const auto& s = symbols[w];
        for (size_t i = 0; i + 1 < s.size(); ++i) {
            if (!mergeable(s[i], s[i + 1])) continue;
            const uint64_t key = pair_key(s[i], s[i + 1]);
            pair_counts[key] += words[w].second;
            pair_pieces[key].push_back(static_cast<int>(w));
        }
    }
    std::priority_queue<PairCount> heap;
    for (const auto& [key, count] : pair_counts) heap.push({count, key});

    // 4. merge the most frequent pair until the vocabulary is full
    std::vector<std::pair<std::string, std::string>> merges;
    std::vector<uint64_t> changed;
    std::vector<int> merged;
    while (vocab.size() < vocab_size && !heap.empty()) {
        const PairCount best = heap.top();
        heap.pop();
        const auto current = pair_counts.find(best.key);
        if (current == pair_counts.end() || current->second != best.count) continue;  // stale entry
        if (best.count < 2) break;
        const int a = key_left(best.key), b = key_right(best.key);
        const std::string merged_text = vocab[a] + vocab[b];
        // the same string can arise from two different splits; then it keeps its first id
        auto [slot, is_new] = vocab_index.emplace(merged_text, static_cast<int>(vocab.size()));
        if (is_new) vocab.push_back(merged_text);
        const int c = slot->second;
        merges.emplace_back(vocab[a], vocab[b]);

        std::vector<int> pieces = std::move(pair_pieces[best.key]);
        pair_pieces.erase(best.key);
        std::sort(pieces.begin(), pieces.end());
        pieces.erase(std::unique(pieces.begin(), pieces.end()), pieces.end());
        changed.clear();
        for (const int w : pieces) {
            auto& s = symbols[w];
            const int64_t freq = words[w].second;
            bool contains = false;
            for (size_t i = 0; i + 1 < s.size() && !contains; ++i)
                contains = s[i] == a && s[i + 1] == b;
            if (!contains) continue;
            for (size_t i = 0; i + 1 < s.size(); ++i) {  // remove this piece's old pairs …
                if (!mergeable(s[i], s[i + 1])) continue;
                const uint64_t key = pair_key(s[i], s[i + 1]);
                pair_counts[key] -= freq;
                changed.push_back(key);
            }
            merged.clear();
            for (size_t i = 0; i < s.size(); ++i) {
                if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
                    merged.push_back(c);
                    ++i;
                } else
                    merged.push_back(s[i]);
            }
            s.swap(merged);
            for (size_t i = 0; i + 1 < s.size(); ++i) {  // … and add its new ones
                if (!mergeable(s[i], s[i + 1])) continue;
                const uint64_t key = pair_key(s[i], s[i + 1]);
                pair_counts[key] += freq;
                changed.push_back(key);
                if (s[i] == c || s[i + 1] == c) pair_pieces[key].push_back(w);
            }
        }
        std::sort(changed.begin(), changed.end());
        changed.erase(std::unique(changed.begin(), changed.end()), changed.end());
        for (const uint64_t key : changed) {
            const auto found = pair_counts.find(key);
            if (found->second <= 0)
                pair_counts.erase(found);
            else
                heap.push({found->second, key});
        }
    }
    return std::make_unique<BpeTokenizer>(std::move(vocab), std::move(merges));
}

}  // namespace rf::data
