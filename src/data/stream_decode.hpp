// Room — data: decoding a growing list of ids piece by piece, for text printed while it is
// generated (roformer generate).
//
// Printing decode({id}) for each new id alone would be wrong: decode() of a sequence puts a
// space before a special-token literal that follows a word (tokenizer.hpp), which depends on
// the text before it. So the decoder keeps every id, decodes the whole sequence each time
//   text_k = decode(ids_0 … ids_k)                    (our decode only ever appends)
// and hands out the part of text_k not handed out before. It also holds back a UTF-8
// character whose bytes are not all there yet, so a terminal never receives half a character
// (our tokens are whole code points, so this only matters for a decoder that splits them).
#pragma once

#include <string>
#include <vector>

#include "data/tokenizer.hpp"

namespace rf::data {

class StreamDecoder {
public:
    // `context`: ids that came before (the prompt); their text is never handed out.
    StreamDecoder(const Tokenizer& tokenizer, std::vector<int> context = {});
    // Adds one id; returns the new text it completes (possibly empty).
    std::string push(int id);
    // The text still held back (an unfinished UTF-8 character), at the end of generation.
    std::string finish();

private:
    const Tokenizer& tokenizer_;
    std::vector<int> ids_;
    size_t handed_out_;  // bytes of decode(ids_) already returned, or owned by the context
};

// The length of the longest prefix of `text` that does not end inside a UTF-8 character.
size_t complete_utf8_prefix(const std::string& text);

}  // namespace rf::data
