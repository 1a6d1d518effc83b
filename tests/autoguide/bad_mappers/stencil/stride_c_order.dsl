# Row-major (C_order) instances, which the CPU stencil kernel does not accept: check finds it (E223; the capture
# keeps the kernel's own failed check at size small, without -lg:safe_mapper, it used to get).
# expect: dsl-e223-rejected-layout
# size: small
# args: -nx 68 -ny 68 -tsteps 4
Task * CPU;
Layout * * * SOA C_order;
