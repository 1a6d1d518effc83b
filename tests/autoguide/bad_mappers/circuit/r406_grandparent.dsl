# Points placed on the grandparent's processor, but the parent is the top-level task, which has no parent: check
# finds it (E206; the capture keeps the run-time R406 it used to get).
# expect: dsl-mapping-function-fails
m = Machine(CPU);
def near_grandparent(Task task) { p = task.parent.parent.processor(m); return m[p[0], p[1]]; }
IndexTaskMap calculate_new_currents,distribute_charge,update_voltages near_grandparent;
