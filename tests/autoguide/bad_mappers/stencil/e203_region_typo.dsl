# A misspelt region name.
# expect: dsl-e203-unknown-region
Region stencil pmx_in CPU SYSMEM;
