# Tiles spread modulo the parent's processor index, which is 0: remainder by zero at run time (the checker cannot
# evaluate functions of task.parent).
# expect: mapper-r401-division-by-zero
m = Machine(CPU);
def by_parent(Task task) { p = task.parent.processor(m); return m[0, task.ipoint[0] % p[1]]; }
IndexTaskMap stencil,increment by_parent;
