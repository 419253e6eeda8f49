// Room — finetune: what a sequence classifier reads (model/classifier.hpp).
//
//   one sentence:  [CLS] a [SEP]              token types 0 … 0
//   a pair:        [CLS] a [SEP] b [SEP]      token types 0 … 0 1 … 1  (b and its [SEP])
// The classifier reads the hidden state of the first token, [CLS]; the types tell the
// encoder which segment a token belongs to (token_type_embeddings [2, C]).
#pragma once

#include <cstddef>
#include <vector>

namespace rf::data {

struct FramedText {
    std::vector<int> ids;
    std::vector<int> types;  // same length as ids
};

// `a`, `b`: token ids without framing (Tokenizer::encode). Too long for max_len: the longer of
// a and b loses its last token until it fits (BERT's "longest first"). Throws
// std::invalid_argument when max_len leaves no room for one token of each text.
FramedText frame_for_classifier(const std::vector<int>& a, const std::vector<int>* b,
                                size_t max_len);

}  // namespace rf::data
