# A typographic quote pasted from a document (no specific rule: the generic syntax rule answers).
# expect: dsl-syntax-other
Task * CPU;
print(“hello”);
