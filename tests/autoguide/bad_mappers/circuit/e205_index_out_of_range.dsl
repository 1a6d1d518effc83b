# One processor per launch point, without wrapping the index: out of range with fewer CPUs than points.
# expect: dsl-e205-static-index-out-of-range
m = Machine(CPU);
def per_point(Task task) { return m[0, task.ipoint[0]]; }
IndexTaskMap calculate_new_currents,distribute_charge,update_voltages per_point;
