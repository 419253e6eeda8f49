// Room — io: 64-bit FNV-1a, the one content hash of the project — a cheap check that
// tells two versions of a file apart (corpus.json, checkpoint manifests, the ranks' data under
// MPI) and a fixed pseudo-random order (the fortunes task's quotes). Not a defence against an
// adversary.
#pragma once

#include <cstdint>
#include <string>

namespace rf {

inline uint64_t fnv1a64(const std::string& bytes) {
    uint64_t h = 0xcbf29ce484222325ULL;  // offset basis
    for (unsigned char c : bytes) {
        h ^= c;
        h *= 0x100000001b3ULL;  // FNV prime
    }
    return h;
}

}  // namespace rf
