# Every region mapped virtually (no instance), which leaf tasks cannot accept: check finds it (E222; the capture
# keeps the run-time R403 it used to get).
# expect: dsl-e222-unusable-memory
Task * CPU;
Region * * CPU VIRTUAL;
