// Room — ropelab: position.layer_schemes, read and checked (see layer_schemes.hpp).
#include "ropelab/layer_schemes.hpp"

#include <stdexcept>
#include <string>

namespace rf {

std::vector<bool> parse_layer_schemes(const PositionConfig& config, size_t num_layers) {
    const std::string& text = config.layer_schemes;
    if (text.empty()) return std::vector<bool>(num_layers, true);
    const std::string scheme = enum_name(config.scheme);
    auto fail = [&](const std::string& why) {
        throw std::invalid_argument("position.layer_schemes = \"" + text + "\" " + why);
    };
    if (config.scheme != PositionKind::rope && config.scheme != PositionKind::alibi)
        fail("needs a scheme that acts inside each layer, but position.scheme = " + scheme +
             " adds its table once, at the embedding; use position.scheme = rope or alibi, or "
             "leave position.layer_schemes empty");
    std::vector<bool> with_position;
    size_t start = 0;
    while (true) {
        const size_t comma = text.find(',', start);
        std::string name = text.substr(start, comma == std::string::npos ? comma : comma - start);
        const size_t first = name.find_first_not_of(' '), last = name.find_last_not_of(' ');
        name = first == std::string::npos ? "" : name.substr(first, last - first + 1);
        if (name == scheme)
            with_position.push_back(true);
        else if (name == "none")
            with_position.push_back(false);
        else
            fail("has \"" + name + "\" for layer " + std::to_string(with_position.size()) +
                 "; each entry must be " + scheme + " (position.scheme) or none, e.g. \"" + scheme +
                 "," + scheme + "," + scheme + ",none\"");
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    if (with_position.size() != num_layers)
        fail("names " + std::to_string(with_position.size()) + " layers but model.num_layers = " +
             std::to_string(num_layers) + "; give one entry per layer");
    return with_position;
}

}  // namespace rf
