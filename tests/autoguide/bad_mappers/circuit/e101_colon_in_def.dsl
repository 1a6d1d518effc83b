# A Python-style colon after a def's parameter list.
# expect: dsl-e101-colon-in-def
m = Machine(CPU);
def f(Task task): return m[0, 0];
IndexTaskMap calculate_new_currents f;
