# Row-major (C_order) instances for stencil, mapped only to CPUs, whose kernel needs F_order: certain to fail.
# expect: dsl-e223-rejected-layout
Task * GPU,CPU;
Task stencil CPU;
Layout * * * SOA C_order;
