# All data in a 1 MiB registered DMA memory, far too small for the grid.
# expect: mapper-r403-no-memory
# args: -nx 1004 -ny 1004 -ll:rsize 1
Task * CPU;
Region * * CPU RDMEM;
