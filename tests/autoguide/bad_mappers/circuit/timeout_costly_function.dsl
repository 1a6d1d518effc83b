# A mapping function whose calls multiply (each function calls the one before it three times): evaluating it
# for one launch point takes 3^24 calls, so mapping never ends; check stops its static evaluation (W310).
# expect: timeout-costly-functions
# timeout_s: 8
Task * CPU;
m = Machine(CPU);
def f0(Task t) { return 1; }
def f1(Task t) { return f0(t) + f0(t) - f0(t); }
def f2(Task t) { return f1(t) + f1(t) - f1(t); }
def f3(Task t) { return f2(t) + f2(t) - f2(t); }
def f4(Task t) { return f3(t) + f3(t) - f3(t); }
def f5(Task t) { return f4(t) + f4(t) - f4(t); }
def f6(Task t) { return f5(t) + f5(t) - f5(t); }
def f7(Task t) { return f6(t) + f6(t) - f6(t); }
def f8(Task t) { return f7(t) + f7(t) - f7(t); }
def f9(Task t) { return f8(t) + f8(t) - f8(t); }
def f10(Task t) { return f9(t) + f9(t) - f9(t); }
def f11(Task t) { return f10(t) + f10(t) - f10(t); }
def f12(Task t) { return f11(t) + f11(t) - f11(t); }
def f13(Task t) { return f12(t) + f12(t) - f12(t); }
def f14(Task t) { return f13(t) + f13(t) - f13(t); }
def f15(Task t) { return f14(t) + f14(t) - f14(t); }
def f16(Task t) { return f15(t) + f15(t) - f15(t); }
def f17(Task t) { return f16(t) + f16(t) - f16(t); }
def f18(Task t) { return f17(t) + f17(t) - f17(t); }
def f19(Task t) { return f18(t) + f18(t) - f18(t); }
def f20(Task t) { return f19(t) + f19(t) - f19(t); }
def f21(Task t) { return f20(t) + f20(t) - f20(t); }
def f22(Task t) { return f21(t) + f21(t) - f21(t); }
def f23(Task t) { return f22(t) + f22(t) - f22(t); }
def f24(Task t) { return f23(t) + f23(t) - f23(t); }
def place(Task t) { return m[0, f24(t) % m.size[1]]; }
IndexTaskMap calculate_new_currents place;
