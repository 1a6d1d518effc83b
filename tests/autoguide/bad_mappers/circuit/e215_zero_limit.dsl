# An InstanceLimit of zero.
# expect: dsl-e215-bad-count
Task * CPU;
InstanceLimit calculate_new_currents 0;
