# A valid mapper given far less time than the run needs (stands for any mapper that hangs).
# expect: timeout
# args: -nx 4004 -ny 4004 -tsteps 400
# timeout_s: 8
Task * CPU;
