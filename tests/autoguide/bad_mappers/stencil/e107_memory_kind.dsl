# A memory kind that does not exist.
# expect: dsl-e107-unknown-kind
Region * * CPU DRAM;
