# All data in registered DMA memory, which this machine does not have.
# expect: mapper-r403-no-memory
Task * CPU;
Region * * CPU RDMEM;
