# Tiles spread modulo the parent's processor index, which is 0: remainder by zero; check finds it (it evaluates
# functions of task.parent with the top-level task as the parent).
# expect: dsl-mapping-function-fails
m = Machine(CPU);
def by_parent(Task task) { p = task.parent.processor(m); return m[0, task.ipoint[0] % p[1]]; }
IndexTaskMap stencil,increment by_parent;
