// Room — config: which key applies when. The ONE table of the settings under which a key
// does nothing (position.xpos_gamma without position.xpos, train.min_lr_ratio with a constant
// schedule, …), one row for every key of config_fields(), read by validate() and by the test
// that sets each key under each of those settings (tests/machinery/test_config.cpp).
//
// The rule: a key whose value is not its default, under a setting that makes it do nothing, is
// refused with one line naming the key, the setting and the default. A key at its default is
// accepted wherever it is (a config that writes a default out is harmless); so is a key the
// table marks as always acting. A run's own config.toml, read again, meets the rule only for
// what a command's --set changes (IdleKeysGiven below): the run was accepted when it started.
// The keys only RoPE reads are also idle wherever no layer rotates; that part of the rule is
// ropelab/rotating_layers.hpp's (validate() calls it first), and the rows say only that they
// are RoPE's.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace rf {

// A setting under which a key does nothing: `key` holds `word` (as a config writes it, without
// quotes) — or, when `other_than`, any value but `word`.
struct IdleSetting {
    const char* key;   // "position.xpos"
    const char* word;  // "false"
    bool other_than = false;
};

struct KeyUse {
    const char* key;                // "position.xpos_gamma"
    const char* does;               // what it does, for the message: "shapes xPos's decay"
    bool rope_only;                 // read only by RoPE: idle too wherever no layer rotates
    std::vector<IdleSetting> idle;  // any one of these makes it do nothing; none: it always acts
};

// Every key of config_fields(), in its order, with the settings under which it does nothing.
const std::vector<KeyUse>& key_uses();

// The first setting of `use` that `config` holds, as the message names it
// ("position.xpos = false"), or "" when the key acts under `config`.
std::string idle_because(const KeyUse& use, const Config& config);

// Part of validate(): throws std::invalid_argument (one line) for the first key whose value is
// not its default under a setting that makes it do nothing: "position.xpos_gamma = 0.3 shapes
// xPos's decay, but position.xpos = false, so it would change nothing; leave it at its default
// (position.xpos_gamma = 0.4), or set position.xpos = true".
void refuse_idle_keys(const Config& config);

// While one lives on this thread, refuse_idle_keys checks only the keys `given` (and none when
// it is empty). load_config holds one for a run's own config.toml, naming the keys its
// overrides changed: the saved keys were accepted when the run was trained.
class IdleKeysGiven {
public:
    explicit IdleKeysGiven(std::set<std::string> given);
    ~IdleKeysGiven();
    IdleKeysGiven(const IdleKeysGiven&) = delete;
    IdleKeysGiven& operator=(const IdleKeysGiven&) = delete;

private:
    std::set<std::string> given_;
    const std::set<std::string>* outer_;
};

// The settings that change nothing because of another key's number, not a word (so not rows of
// key_uses()): model.embedding_size equal to model.hidden, position.scaling = linear or ntk with
// position.scaling_factor = 1, train.checkpoint_every beyond train.steps. One line each, for
// `train` to print as notes; empty when every such key acts (or is at its default).
std::vector<std::string> idle_relation_notes(const Config& config);

// The keys ("table.key") whose values differ between `a` and `b`.
std::set<std::string> keys_changed(const Config& a, const Config& b);

}  // namespace rf
