tnbc-profile 1
world_size 2

site isort+0x1111;isort+0x2222 alltoallv
  decision off measured: early calls were not faster than blocking ones in the trial run (cycle 1.2 ms against 1.1 ms)
end
