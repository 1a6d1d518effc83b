# All data in registered DMA memory, which this machine does not have.
# expect: dsl-e221-absent-memory
Task * CPU;
Region * * CPU RDMEM;
