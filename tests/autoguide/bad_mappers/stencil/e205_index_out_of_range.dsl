# One processor per tile, without wrapping the index.
# expect: dsl-e205-static-index-out-of-range
m = Machine(CPU);
def per_tile(Task task) { return m[0, task.ipoint[0]]; }
IndexTaskMap stencil,increment per_tile;
