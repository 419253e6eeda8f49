// A WRONG solution of graded task mlm_masking that starts a process of its own session
// (setsid), which keeps the tests' output open and would outlive them, then loops forever. The
// time limit holds for everything the tests started: the grade ends at the limit, names the
// endless loop, and ends the process left behind.
// scripts/grade.sh --check grades it and requires the hint below, within the time limit plus
// a few seconds. Not an answer; left out of a handout. POSIX only (fork, setsid).
// expected hint: any.endless
// expected status: timeout
// grade timeout: 5
// grade within: 15
#include <unistd.h>

#include "data/mlm.hpp"
#include "data/tokenizer.hpp"

namespace rf::data {

int masked_token_for(int original, double action, size_t vocab_size, const MaskingOptions& options,
                     Rng& rng) {
    static bool started = false;
    if (!started) {
        started = true;
        if (fork() == 0) {
            setsid();
            if (fork() == 0) {
                sleep(600);  // holds stdout and stderr open for ten minutes
                _exit(0);
            }
            _exit(0);
        }
    }
    for (volatile unsigned spin = 0;; spin = spin + 1u) {
    }
    return original;
}

}  // namespace rf::data
