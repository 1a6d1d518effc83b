# Array-of-structs instances for the CPU stencil kernel, which needs SOA: check finds it (E223; the capture keeps
# Legion's safe-mapper rejection it used to get).
# expect: dsl-e223-rejected-layout
Task * CPU;
Layout * * * AOS;
