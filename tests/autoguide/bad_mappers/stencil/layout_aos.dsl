# Array-of-structs instances for the CPU stencil kernel, which needs SOA; Legion's safe-mapper check rejects them.
# expect: legion-layout-constraint
Task * CPU;
Layout * * * AOS;
