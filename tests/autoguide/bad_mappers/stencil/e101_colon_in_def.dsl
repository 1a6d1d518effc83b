# A Python-style colon after a def's parameter list.
# expect: dsl-e101-colon-in-def
m = Machine(CPU);
def block(Task task): return m[0, task.ipoint[0] * m.size[1] / task.ispace[0]];
IndexTaskMap stencil block;
