# Every region mapped virtually (no instance), which leaf tasks cannot accept.
# expect: mapper-r403-no-memory
Task * CPU;
Region * * CPU VIRTUAL;
