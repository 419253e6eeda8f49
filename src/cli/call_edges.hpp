// Room — cli: recording which of our functions call which during one turn of the training loop,
// in a coverage build (call_edges.cpp); elsewhere both calls do nothing.
#pragma once

namespace rf {

// From now on, note each (function, call site) once, when RF_CALL_EDGES_OUT names a file.
void start_call_edges();
// Write the pairs noted to RF_CALL_EDGES_OUT, one "function call_site" line each (offsets into
// the program's image, for addr2line), and stop noting.
void write_call_edges();

}  // namespace rf
