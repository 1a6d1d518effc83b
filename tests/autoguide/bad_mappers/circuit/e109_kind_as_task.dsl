# The older "IndexTaskMap GPU f" form with a processor kind where the task list belongs.
# expect: dsl-e109-reserved-word
m = Machine(CPU);
def linearcyclic(Task task) { return m[0, task.ipoint[0] % m.size[1]]; }
IndexTaskMap GPU linearcyclic;
