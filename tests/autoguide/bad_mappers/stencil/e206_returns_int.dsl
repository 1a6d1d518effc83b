# A mapping function that returns the processor number instead of the processor.
# expect: dsl-mapping-function-type
m = Machine(CPU);
def cyclic(Task task) { return task.ipoint[0] % m.size[1]; }
IndexTaskMap stencil,increment cyclic;
