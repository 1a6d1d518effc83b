# An InstanceLimit of zero.
# expect: dsl-e215-bad-count
InstanceLimit stencil 0;
