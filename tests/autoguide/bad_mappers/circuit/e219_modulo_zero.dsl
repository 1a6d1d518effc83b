# Points spread over "all CPUs but one", which is none on a one-CPU machine: remainder by zero.
# expect: dsl-mapping-function-fails
m = Machine(CPU);
def spare_cpus(Task task) { return m[0, 1 + task.ipoint[0] % (m.size[1] - 1)]; }
IndexTaskMap calculate_new_currents,distribute_charge,update_voltages spare_cpus;
