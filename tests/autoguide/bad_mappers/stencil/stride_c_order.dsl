# Row-major (C_order) instances, which the CPU stencil kernel does not accept; at size small (no -lg:safe_mapper)
# the kernel's own check fails.
# expect: stencil-stride-assertion
# size: small
# args: -nx 68 -ny 68 -tsteps 4
Task * CPU;
Layout * * * SOA C_order;
