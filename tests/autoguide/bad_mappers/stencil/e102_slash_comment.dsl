# Integer division written as '//', which starts a comment.
# expect: dsl-e102-missing-semicolon
m = Machine(CPU);
half = m.size[1] // 2;
