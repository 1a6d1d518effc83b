# A misspelt global variable.
# expect: dsl-e201-undefined-variable
m = Machine(CPU);
ncpu = m.size[1];
def cyclic(Task task) { return m[0, task.ipoint[0] % ncpus]; }
IndexTaskMap calculate_new_currents cyclic;
