# A processor kind inside a task list (a kind selector such as "IndexTaskMap GPU f" must stand alone).
# expect: dsl-e109-reserved-word
m = Machine(CPU);
def linearcyclic(Task task) { return m[0, task.ipoint[0] % m.size[1]]; }
IndexTaskMap GPU,calculate_new_currents linearcyclic;
