# A statement without its semicolon.
# expect: dsl-e102-missing-semicolon
Task * CPU
Region * * CPU SYSMEM;
