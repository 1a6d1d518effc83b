# A valid mapper with an InstanceLimit given far less time than the run needs (stands for any limited mapper that
# hangs or crawls): AutoGuide names the limit as the possible cause.
# expect: timeout-instance-limit
# args: -nx 4004 -ny 4004 -tsteps 400
# timeout_s: 8
Task * CPU;
InstanceLimit stencil 1;
