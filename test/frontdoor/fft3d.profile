tnbc-profile 1
world_size 2
source run.db

site fft3d+0x1a2b alltoall
  comm_size 2
  decision on predicted saving 120.0 us per call
end

site fft3d+0x2000 allreduce
  decision off tiny sub-messages: 8 B < 256 B break-even (guarding and fault handling cost more than the message)
end
