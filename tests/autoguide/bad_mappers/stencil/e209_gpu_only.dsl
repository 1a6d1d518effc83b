# Stencil on GPU only, on a machine without GPUs.
# expect: dsl-e209-kind-unusable
Task stencil GPU;
