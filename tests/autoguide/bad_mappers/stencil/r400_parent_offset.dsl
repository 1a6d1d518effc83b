# Tiles placed relative to the parent's processor, without wrapping: out of range; check finds it (the parent is
# the top-level task, on the first CPU).
# expect: dsl-e205-static-index-out-of-range
m = Machine(CPU);
def near_parent(Task task) { p = task.parent.processor(m); return m[p[0], p[1] + task.ipoint[0]]; }
IndexTaskMap stencil,increment near_parent;
