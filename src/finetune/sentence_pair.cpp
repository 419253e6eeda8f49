// Room — finetune: framing one sentence or a pair for the classifier (see sentence_pair.hpp).
#include "finetune/sentence_pair.hpp"

#include <stdexcept>
#include <string>

#include "data/tokenizer.hpp"

namespace rf::data {

FramedText frame_for_classifier(const std::vector<int>& a, const std::vector<int>* b,
                                size_t max_len) {
    const size_t framing = b ? 3 : 2;  // [CLS] a [SEP] (b [SEP])
    if (max_len < framing + (b ? 2 : 1))
        throw std::invalid_argument("classifier: max_len " + std::to_string(max_len) +
                                    " leaves no room for the text; raise it");
    size_t na = a.size(), nb = b ? b->size() : 0;
    while (na + nb + framing > max_len) (na >= nb ? na : nb) -= 1;  // longest first
    FramedText out;
    out.ids.push_back(kClsId);
    out.ids.insert(out.ids.end(), a.begin(), a.begin() + long(na));
    out.ids.push_back(kSepId);
    out.types.assign(out.ids.size(), 0);
    if (b) {
        out.ids.insert(out.ids.end(), b->begin(), b->begin() + long(nb));
        out.ids.push_back(kSepId);
        out.types.resize(out.ids.size(), 1);
    }
    return out;
}

}  // namespace rf::data
