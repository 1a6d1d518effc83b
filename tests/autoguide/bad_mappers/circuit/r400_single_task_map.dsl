# The check task placed on the processor after its parent's, without wrapping: out of range on one CPU.
# expect: mapper-r400-index-out-of-bound
m = Machine(CPU);
def next_cpu(Task task) { q = task.parent.processor(m); return m[q[0], q[1] + 1]; }
SingleTaskMap check_circuit next_cpu;
