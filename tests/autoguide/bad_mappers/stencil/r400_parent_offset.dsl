# Tiles placed relative to the parent's processor, without wrapping: out of range at run time.
# expect: mapper-r400-index-out-of-bound
m = Machine(CPU);
def near_parent(Task task) { p = task.parent.processor(m); return m[p[0], p[1] + task.ipoint[0]]; }
IndexTaskMap stencil,increment near_parent;
