# A print with more placeholders than arguments (no specific rule: the generic DSL rule answers).
# expect: dsl-semantic-other
m = Machine(CPU);
print("{} CPUs on {} nodes", m.size[1]);
