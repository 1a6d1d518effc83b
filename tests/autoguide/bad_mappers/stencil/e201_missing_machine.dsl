# A machine model used without its Machine(...) assignment.
# expect: dsl-e201-undefined-machine
def cyclic(Task task) { return mcpu[0, task.ipoint[0] % mcpu.size[1]]; }
IndexTaskMap stencil,increment cyclic;
