# Row-major (C_order) instances for the CPU stencil kernel; at size ci Legion's safe-mapper check rejects them.
# expect: legion-layout-constraint
Task * CPU;
Layout * * * SOA C_order;
