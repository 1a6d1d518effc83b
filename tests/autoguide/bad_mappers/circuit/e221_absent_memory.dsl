# All data in GPU framebuffers on a machine without GPUs: certain to fail, so check rejects it.
# expect: dsl-e221-absent-memory
Task * CPU;
Region * * CPU FBMEM;
