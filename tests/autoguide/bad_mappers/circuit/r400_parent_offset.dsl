# Points placed relative to the parent's processor, without wrapping: out of range at run time (the checker cannot
# evaluate functions of task.parent).
# expect: mapper-r400-index-out-of-bound
m = Machine(CPU);
def next_to_parent(Task task) { p = task.parent.processor(m); return m[p[0], p[1] + task.ipoint[0]]; }
IndexTaskMap calculate_new_currents,distribute_charge,update_voltages next_to_parent;
