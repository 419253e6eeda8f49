// Stage 1 — tensor: an enum's values and their spellings in config files, written once.
//
// An option with a few fixed values (model.attention = softmax | linear, position.scheme =
// rope | …) is an enum in the code and a word in the config. Each such enum declares, beside
// itself, one table of its values and their words, found by argument-dependent lookup:
//
//   enum class AttentionKind { softmax, linear };
//   constexpr std::array<NamedValue<AttentionKind>, 2> named_values(AttentionKind) {
//       return {{{AttentionKind::softmax, "softmax"}, {AttentionKind::linear, "linear"}}};
//   }
//
// and everything else — the word of a value, parsing a word (once, when the config is read),
// the list of allowed words in a refusal — follows from that table here.
#pragma once

#include <stdexcept>
#include <string>

namespace rf {

template <class E>
struct NamedValue {
    E value;
    const char* name;
};

// The word of a value ("softmax").
template <class E>
const char* enum_name(E value) {
    for (const NamedValue<E>& n : named_values(E{}))
        if (n.value == value) return n.name;
    return "?";
}

// The allowed words, "softmax, linear".
template <class E>
std::string enum_choices() {
    std::string list;
    for (const NamedValue<E>& n : named_values(E{}))
        list += (list.empty() ? "" : ", ") + std::string(n.name);
    return list;
}

// True and *out set when `word` is one of E's words.
template <class E>
bool try_parse_enum(const std::string& word, E* out) {
    for (const NamedValue<E>& n : named_values(E{}))
        if (word == n.name) {
            *out = n.value;
            return true;
        }
    return false;
}

// The value of `word`; anything else throws std::invalid_argument naming `key` and the
// allowed words: "model.attention must be one of softmax, linear, got 'soft'".
template <class E>
E parse_enum(const std::string& word, const std::string& key) {
    E value{};
    if (!try_parse_enum(word, &value))
        throw std::invalid_argument(key + " must be one of " + enum_choices<E>() + ", got '" +
                                    word + "'");
    return value;
}

}  // namespace rf
