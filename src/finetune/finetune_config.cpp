// Room — finetune: the fine-tuning table (see finetune_config.hpp).
#include "finetune/finetune_config.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <variant>

#include <toml++/toml.h>

#include "config/config.hpp"
#include "config/toml_quote.hpp"
#include "io/read_file.hpp"

namespace rf {

namespace {

using Member = std::variant<std::string*, double*, size_t*>;
struct Key {
    const char* name;
    Member member;
};

std::vector<Key> keys_of(FinetuneConfig& c) {
    return {{"task", &c.task},
            {"corpus", &c.corpus},
            {"fortunes_dir", &c.fortunes_dir},
            {"lr", &c.lr},
            {"epochs", &c.epochs},
            {"batch_size", &c.batch_size},
            {"warmup_steps", &c.warmup_steps},
            {"dropout", &c.dropout},
            {"weight_decay", &c.weight_decay},
            {"grad_clip", &c.grad_clip},
            {"max_len", &c.max_len},
            {"max_train_examples", &c.max_train_examples},
            {"eval_every", &c.eval_every},
            {"patience", &c.patience},
            {"seed", &c.seed},
            {"threads", &c.threads}};
}

std::string key_list(FinetuneConfig& c) {
    std::string out;
    for (const Key& k : keys_of(c)) out += (out.empty() ? "" : ", ") + std::string(k.name);
    return out;
}

void set_from_node(FinetuneConfig& c, const std::string& name, const toml::node& node,
                   const std::string& where) {
    for (const Key& k : keys_of(c)) {
        if (name != k.name) continue;
        if (auto* s = std::get_if<std::string*>(&k.member)) {
            if (!node.is_string())
                throw std::invalid_argument("finetune." + name + " must be a string" + where);
            **s = *node.value<std::string>();
        } else if (auto* d = std::get_if<double*>(&k.member)) {
            if (!node.is_number())
                throw std::invalid_argument("finetune." + name + " must be a number" + where);
            **d = *node.value<double>();
        } else {
            const auto v = node.value<int64_t>();
            if (!node.is_integer() || !v || *v < 0)
                throw std::invalid_argument("finetune." + name + " must be a non-negative integer" +
                                            where);
            **std::get_if<size_t*>(&k.member) = static_cast<size_t>(*v);
        }
        return;
    }
    throw std::invalid_argument("unknown key finetune." + name + where + "; the keys are " +
                                key_list(c));
}

void validate(const FinetuneConfig& c) {
    auto bad = [](const std::string& what) { throw std::invalid_argument(what); };
    if (!(c.lr > 0) || !std::isfinite(c.lr)) bad("finetune.lr must be > 0");
    if (c.epochs == 0) bad("finetune.epochs must be ≥ 1");
    if (c.batch_size == 0) bad("finetune.batch_size must be ≥ 1");
    if (!(c.dropout >= 0 && c.dropout < 1)) bad("finetune.dropout must be in [0, 1)");
    if (!(c.weight_decay >= 0)) bad("finetune.weight_decay must be ≥ 0");
    if (!(c.grad_clip >= 0)) bad("finetune.grad_clip must be ≥ 0");
    if (c.max_len < 5) bad("finetune.max_len must be ≥ 5 ([CLS] a [SEP] b [SEP])");
    if (c.threads == 0) bad("finetune.threads must be ≥ 1");
    // The same ceilings as pre-training's keys of the same meaning (config/limits.cpp).
    check_size_limit("train.threads", c.threads, "finetune.threads");
    check_size_limit("train.batch_size", c.batch_size, "finetune.batch_size");
    check_size_limit("data.seq_len", c.max_len, "finetune.max_len");
    // Fine-tuning takes a few passes (BERT: 2 to 4 epochs; Devlin et al. 2019, appendix A.3);
    // beyond kMaxFinetuneEpochs a typo (an extra zero or two) would run for days.
    if (c.epochs > kMaxFinetuneEpochs)
        bad("finetune.epochs = " + std::to_string(c.epochs) + " is over the limit of " +
            std::to_string(kMaxFinetuneEpochs) +
            " (passes over the training examples; fine-tuning needs a few); use a smaller value");
}

}  // namespace

FinetuneConfig load_finetune_config(const std::optional<std::string>& path,
                                    const std::vector<std::string>& overrides) {
    FinetuneConfig c;
    if (path) {
        const std::string text = read_regular_file(
            *path, "--config", "pass a fine-tune TOML file (configs/finetune.toml)", 1 << 20);
        toml::table root;
        try {
            root = toml::parse(text, *path);
        } catch (const toml::parse_error& e) {
            throw std::invalid_argument(*path + ": not valid TOML (" +
                                        std::string(e.description()) + ")");
        }
        for (const auto& [table, node] : root) {
            if (table.str() != "finetune" || !node.is_table())
                throw std::invalid_argument(*path + ": unexpected '" + std::string(table.str()) +
                                            "'; a fine-tune config has one [finetune] table");
            for (const auto& [key, value] : *node.as_table())
                set_from_node(c, std::string(key.str()), value, " in " + *path);
        }
    }
    for (const std::string& kv : overrides) {
        const size_t eq = kv.find('=');
        if (eq == std::string::npos)
            throw std::invalid_argument("--set '" + kv + "' is not key=value");
        std::string key = kv.substr(0, eq);
        if (key.rfind("finetune.", 0) == 0) key = key.substr(9);
        const std::string value = kv.substr(eq + 1);
        toml::table parsed;
        try {
            parsed = toml::parse("value = " + value);
        } catch (const toml::parse_error&) {
            parsed = toml::table{{"value", value}};  // a bare word: a string
        }
        set_from_node(c, key, *parsed.get("value"), " (--set " + kv + ")");
    }
    validate(c);
    return c;
}

std::string to_toml(const FinetuneConfig& config) {
    FinetuneConfig c = config;
    std::ostringstream out;
    out << "[finetune]\n";
    for (const Key& k : keys_of(c)) {
        out << k.name << " = ";
        if (auto* s = std::get_if<std::string*>(&k.member))
            out << quote_toml(**s);
        else if (auto* d = std::get_if<double*>(&k.member)) {
            std::ostringstream v;
            v.precision(17);
            v << **d;
            std::string t = v.str();
            if (t.find_first_of(".eEn") == std::string::npos) t += ".0";
            out << t;
        } else
            out << **std::get_if<size_t*>(&k.member);
        out << "\n";
    }
    return out.str();
}

}  // namespace rf
