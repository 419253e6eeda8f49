// Room — io: the checked whole-number reader (json_whole.hpp).
#include "io/json_whole.hpp"

#include <stdexcept>

namespace rf {

uint64_t json_whole(const nlohmann::json& object, const char* key, const std::string& shown) {
    return json_whole(object.at(key), shown);
}

uint64_t json_whole(const nlohmann::json& v, const std::string& shown) {
    if (!v.is_number_unsigned() || v.get<uint64_t>() > kMaxJsonWhole)
        throw std::invalid_argument("\"" + shown + "\" is " + v.dump() +
                                    ", not a whole number from 0 to 2^53");
    return v.get<uint64_t>();
}

}  // namespace rf
