# The check task placed on the processor after its parent's, without wrapping: out of range on one CPU; check
# finds it (E205; the capture keeps the run-time R400 it used to get).
# expect: dsl-e205-static-index-out-of-range
m = Machine(CPU);
def next_cpu(Task task) { q = task.parent.processor(m); return m[q[0], q[1] + 1]; }
SingleTaskMap check_circuit next_cpu;
