// Room — io: the one checked reader of a whole number in a JSON file a user can edit (a run's
// manifest, progress, early-stopping and task records). nlohmann's get<size_t>() converts 1e30,
// -1 or 2.5 without a word (undefined behaviour or a wrapped number); this refuses them, naming
// the field.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace rf {

// Every JSON reader keeps a whole number up to 2^53 exact.
inline constexpr uint64_t kMaxJsonWhole = uint64_t(1) << 53;

// What json_whole throws: "\"<shown>\" is 1e+30, not a whole number from 0 to 2^53".
struct NotJsonWhole : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// A value as a whole number from 0 to 2^53, or NotJsonWhole naming it as `shown` ("step",
// "best_validation.n", "file_ids[3]"). J: nlohmann::json or nlohmann::ordered_json.
template <class J>
uint64_t json_whole(const J& value, const std::string& shown) {
    if (!value.is_number_unsigned() || value.template get<uint64_t>() > kMaxJsonWhole)
        throw NotJsonWhole("\"" + shown + "\" is " + value.dump() +
                           ", not a whole number from 0 to 2^53");
    return value.template get<uint64_t>();
}
// object[key] the same way; a missing key throws nlohmann's out_of_range.
template <class J>
uint64_t json_whole(const J& object, const char* key, const std::string& shown) {
    return json_whole(object.at(key), shown);
}

}  // namespace rf
