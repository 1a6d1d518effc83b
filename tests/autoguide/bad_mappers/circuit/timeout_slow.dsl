# A valid mapper given far less time than the run needs (stands for any mapper that hangs).
# expect: timeout
# args: -l 100000
# timeout_s: 8
Task * CPU;
