# Row-major (C_order) instances for the CPU stencil kernel: check finds it (E223; the capture keeps Legion's
# safe-mapper rejection at size ci it used to get).
# expect: dsl-e223-rejected-layout
Task * CPU;
Layout * * * SOA C_order;
