# A misspelt region name.
# expect: dsl-e203-unknown-region
Region * rp_shard CPU SYSMEM;
