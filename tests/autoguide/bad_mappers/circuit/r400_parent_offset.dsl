# Points placed relative to the parent's processor, without wrapping: out of range; check finds it (E205: it
# evaluates functions of task.parent with the top-level task, on the first CPU, as the parent; the capture keeps
# the run-time R400 it used to get).
# expect: dsl-e205-static-index-out-of-range
m = Machine(CPU);
def next_to_parent(Task task) { p = task.parent.processor(m); return m[p[0], p[1] + task.ipoint[0]]; }
IndexTaskMap calculate_new_currents,distribute_charge,update_voltages next_to_parent;
