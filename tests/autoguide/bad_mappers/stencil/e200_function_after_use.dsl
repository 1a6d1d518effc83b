# A function used before its definition.
# expect: dsl-e200-undefined-function
m = Machine(CPU);
IndexTaskMap stencil,increment cyclic;
def cyclic(Task task) { return m[0, task.ipoint[0] % m.size[1]]; }
