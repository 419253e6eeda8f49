// The test programs run with the RoPE lab plugged in, as `roformer` does (src/cli/main.cpp):
// linked into every test program but the core-alone one (tests/CMakeLists.txt).
#include "ropelab/ropelab.hpp"

namespace {
const bool plugged_in = (rf::plug_in_rope_lab(&rf::rope_lab_room()), true);
}  // namespace
