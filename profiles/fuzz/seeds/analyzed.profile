tnbc-profile 1
# Written by tnbc-analyze; format: profiles/FORMAT.md. Priorities: 0 = first.
world_size 4
source run.db
piece 32768

site app+0x10 alltoall
  comm_size 4
  block_bytes 1048576
  chunks 0
  calls 100 traced 3
  decision on regime c (no CURC, code consumes faster than data arrives): saves 400.0 us per call, 40% of Tcomm
  order consensus 3 1 2 0
  agreement identical 1 tau 1 samples 12
  model tcomm_ns 1001000 dcomm 4194304 rcomm 4.19011389e+09 tcurc_ns 0 rcrc 1.048576e+10 tinit_ns 431430.4 toverlap_ns 400000 saving_call_ns 400000 saving_run_ns 40000000 regime c
  recv_prio 0 3 1 2 0
  recv_prio 1 3 1 2 0
  recv_prio 2 3 1 2 0
  recv_prio 3 3 1 2 0
  send_prio 0 3 3 3 3
  send_prio 1 1 1 1 1
  send_prio 2 2 2 2 2
  send_prio 3 0 0 0 0
  node A 1 0
  node B 3 2
end

site app+0x20 bcast
  comm_size 4
  block_bytes 1048576
  chunks 4
  calls 1 traced 1
  decision on regime e (some CURC, code consumes faster than data arrives): saves 450.0 us per call, 45% of Tcomm
  order consensus 3 1 2 0
  agreement identical 1 tau 1 samples 4
  model tcomm_ns 1000000 dcomm 1048576 rcomm 1.048576e+09 tcurc_ns 50000 rcrc 2.62144e+09 tinit_ns 116857.6 toverlap_ns 450000 saving_call_ns 450000 saving_run_ns 450000 regime e
  recv_prio * 3 1 2 0
  send_prio * 3 1 2 0
end
