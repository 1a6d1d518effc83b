# Row-major (C_order) instances, which the CPU stencil kernel does not accept.
# expect: stencil-stride-assertion
Task * CPU;
Layout * * * SOA C_order;
