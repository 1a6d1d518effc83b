# A 2-D index into the 1-D launch point of stencil's tiles.
# expect: dsl-mapping-function-fails
m = Machine(CPU);
def by_row(Task task) { return m[0, task.ipoint[1] % m.size[1]]; }
IndexTaskMap stencil,increment by_row;
