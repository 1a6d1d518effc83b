# All data in registered DMA memory, which this machine does not have: check finds it (E221; the capture keeps
# the run-time R403 it used to get).
# expect: dsl-e221-absent-memory
Task * CPU;
Region * * CPU RDMEM;
