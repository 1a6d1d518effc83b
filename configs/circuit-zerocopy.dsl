# Every region a GPU task uses in zero-copy memory (pinned system memory that the GPU reads over the bus): the
# mapper that always fits, the reference of the `tight` size (reports/memory-pressure-h200.md). On a machine without
# GPUs it is Legion's default placement.
Task * GPU,CPU;
Region * * GPU ZCMEM;
Region * * CPU SYSMEM;
