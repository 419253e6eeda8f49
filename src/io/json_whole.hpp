// Room — io: the one checked reader of a whole number in a JSON file a user can edit (a run's
// progress, early-stopping and task records). nlohmann's get<size_t>() converts 1e30, -1 or 2.5
// without a word (undefined behaviour or a wrapped number); this refuses them, naming the field.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace rf {

// Every JSON reader keeps a whole number up to 2^53 exact.
inline constexpr uint64_t kMaxJsonWhole = uint64_t(1) << 53;

// object[key] as a whole number from 0 to 2^53. Throws std::invalid_argument
// "\"<shown>\" is 1e+30, not a whole number from 0 to 2^53" (shown names the field as the
// message should: "step", "best_validation.n"); a missing key throws nlohmann's out_of_range.
uint64_t json_whole(const nlohmann::json& object, const char* key, const std::string& shown);
// The same for a value itself (an array's element: shown = "file_ids[3]").
uint64_t json_whole(const nlohmann::json& value, const std::string& shown);

}  // namespace rf
