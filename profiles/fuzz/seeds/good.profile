tnbc-profile 1
# Written by tnbc-analyze; format: profiles/FORMAT.md. Priorities: 0 = first.
world_size 4
source run%20one.db

site app+0x1a2b alltoall
  comm_size 4
  block_bytes 1048576
  chunks 0
  calls 100 traced 8
  decision on regime c: saves 400.0 us per call
  order consensus 3 1 2 0
  agreement identical 1 tau 1 samples 32
  model tcomm_ns 1001000 dcomm 4194304 rcomm 4.19011389e+09 tcurc_ns 0 rcrc 1.048576e+10 tinit_ns 431430.4 toverlap_ns 400000 saving_call_ns 400000 saving_run_ns 40000000 regime c
  rank_order 2 0 1 2 3
  recv_prio 0 3 1 2 0
  recv_prio 1 3 1 2 0
  recv_prio 2 0 1 2 3
  recv_prio 3 3 1 2 0
  send_prio 0 3 3 0 3
  send_prio 1 1 1 1 1
  send_prio 2 2 2 2 2
  send_prio 3 0 0 3 0
  node A 1 0
  node B%23x 3 2
end

site lib%25.so+0x10 bcast
  comm_size 4
  block_bytes 262144
  chunks 4
  calls 3 traced 3
  decision off tiny sub-messages
  order default 0 1 2 3
  agreement identical 0 tau 0 samples 0
  model tcomm_ns 1000 dcomm 100 rcomm 1e+08 tcurc_ns inf rcrc inf tinit_ns 10 toverlap_ns 990 saving_call_ns 990 saving_run_ns 2970 regime a
  recv_prio * 0 1 2 3
  send_prio * 0 1 2 3
end

site app+0x99 alltoallv
  comm_size 4
  block_bytes -1
  chunks 0
  calls 5 traced 5
  decision on regime b
  order consensus 0 1 2 3
  agreement identical 0.75 tau 0.9 samples 20
  model tcomm_ns 5000 dcomm 1000 rcomm 2e+08 tcurc_ns 0 rcrc 1e+08 tinit_ns 100 toverlap_ns 4900 saving_call_ns 4900 saving_run_ns 24500 regime b
  vhash 1 0x3addc9c9d5ff7e55
  recv_prio 0 0 1 2 3
  recv_prio 1 0 1 2 3
  recv_prio 2 0 1 2 3
  recv_prio 3 0 1 2 3
  send_prio 0 0 0 0 0
  send_prio 1 1 1 1 1
  send_prio 2 2 2 2 2
  send_prio 3 3 3 3 3
end
