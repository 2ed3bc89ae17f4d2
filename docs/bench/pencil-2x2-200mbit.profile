tnbc-profile 1
# program pencil build-id:aac593dafb015244e6cd177d75c916869441f966
# Written by tnbc-analyze; format: profiles/FORMAT.md. Priorities: 0 = first.
world_size 4
source /work/wt/bench/build/bench/apps/20261124T190337Z/pencil.db

site pencil+0x3a98 allreduce
  comm_size 4
  block_bytes 32
  chunks 1
  calls 20 traced 8
  decision off tiny sub-messages: 32 B < 256 B break-even (guarding and fault handling cost more than the message)
  order default 0
  agreement identical 0 tau 0 samples 0
  model tcomm_ns 8400122.98 dcomm 32 rcomm 3809.46804 tcurc_ns inf rcrc inf tinit_ns 8400137.79 toverlap_ns 0 saving_call_ns 0 saving_run_ns 0 regime a
  # confidence 1.00 observer_share 0.000 steps 0 dropped 0
  recv_prio * 0
  send_prio * 0
end

site pencil+0x3c06@c2.1ebec3e6 alltoall
  comm_size 2
  block_bytes 4194304
  chunks 0
  calls 10 traced 8
  decision off no predicted overlap: Tinit 5850.2 us >= Tcomm 4962.4 us
  order consensus 0 1
  agreement identical 1 tau 1 samples 16
  model tcomm_ns 4962423.55 dcomm 8388608 rcomm 1.69042564e+09 tcurc_ns 12718.6497 rcrc 5.35160494e+09 tinit_ns 5850170.63 toverlap_ns 0 saving_call_ns 0 saving_run_ns 0 regime c
  # confidence 0.98 observer_share 0.018 steps 0 dropped 0
  recv_prio 0 0 1
  recv_prio 1 0 1
  send_prio 0 0 0
  send_prio 1 1 1
  node tnbc-bench131-n1 0 1
end

site pencil+0x3c06@c2.39290406 alltoall
  comm_size 2
  block_bytes 4194304
  chunks 0
  calls 10 traced 8
  decision off no predicted overlap for the slowest rank (the formula gives 1343.4 us, but that rank waits for the data it reads first and has little to do after it)
  order consensus 0 1
  agreement identical 1 tau 1 samples 16
  model tcomm_ns 5587522.98 dcomm 8388608 rcomm 1.50131069e+09 tcurc_ns 11386.373 rcrc 6.29779663e+09 tinit_ns 3859411.57 toverlap_ns 1343377.31 saving_call_ns 0 saving_run_ns 0 regime c
  # confidence 0.99 observer_share 0.013 steps 0 dropped 0
  recv_prio 0 0 1
  recv_prio 1 0 1
  send_prio 0 0 0
  send_prio 1 1 1
  node tnbc-bench131-n0 0 1
end

site pencil+0x3c06@c2.dbc7a4e5 alltoall
  comm_size 2
  block_bytes 4194304
  chunks 0
  calls 10 traced 8
  decision off no predicted overlap for the slowest rank (the formula gives 2883.9 us, but that rank waits for the data it reads first and has little to do after it)
  order consensus 0 1
  agreement identical 1 tau 1 samples 16
  model tcomm_ns 350617628 dcomm 8388608 rcomm 23925231.7 tcurc_ns 17788.1254 rcrc 2.92679717e+09 tinit_ns 4747707.79 toverlap_ns 2883927.29 saving_call_ns 0 saving_run_ns 0 regime c
  # confidence 0.98 observer_share 0.020 steps 0 dropped 0
  recv_prio 0 0 1
  recv_prio 1 0 1
  send_prio 0 0 0
  send_prio 1 1 1
end

site pencil+0x3c06@c2.e8fcc4f5 alltoall
  comm_size 2
  block_bytes 4194304
  chunks 0
  calls 10 traced 8
  decision off no predicted overlap for the slowest rank (the formula gives 2910.0 us, but that rank waits for the data it reads first and has little to do after it)
  order consensus 0 1
  agreement identical 1 tau 1 samples 16
  model tcomm_ns 349173554 dcomm 8388608 rcomm 24024179.1 tcurc_ns 16791.1562 rcrc 2.89942871e+09 tinit_ns 4961874.41 toverlap_ns 2909984.56 saving_call_ns 0 saving_run_ns 0 regime c
  # confidence 0.98 observer_share 0.021 steps 0 dropped 0
  recv_prio 0 0 1
  recv_prio 1 0 1
  send_prio 0 0 0
  send_prio 1 1 1
end

site pencil+0x485f reduce
  comm_size 4
  block_bytes 64
  chunks 1
  calls 1 traced 1
  decision off tiny sub-messages: 64 B < 256 B break-even (guarding and fault handling cost more than the message)
  order default 0
  agreement identical 0 tau 0 samples 0
  model tcomm_ns 39988813.1 dcomm 64 rcomm 1600.4476 tcurc_ns inf rcrc inf tinit_ns 39988842.1 toverlap_ns 0 saving_call_ns 0 saving_run_ns 0 regime a
  # confidence 1.00 observer_share 0.000 steps 0 dropped 0
  recv_prio * 0
  send_prio * 0
end

site pencil+0x4884 allreduce
  comm_size 4
  block_bytes 4
  chunks 1
  calls 1 traced 1
  decision off tiny sub-messages: 4 B < 256 B break-even (guarding and fault handling cost more than the message)
  order default 0
  agreement identical 0 tau 0 samples 0
  model tcomm_ns 3341971 dcomm 4 rcomm 1196.89848 tcurc_ns inf rcrc inf tinit_ns 3341973.37 toverlap_ns 0 saving_call_ns 0 saving_run_ns 0 regime a
  # confidence 1.00 observer_share 0.001 steps 0 dropped 0
  recv_prio * 0
  send_prio * 0
end
