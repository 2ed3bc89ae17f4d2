tnbc-profile 1
# Written by tnbc-analyze; format: profiles/FORMAT.md. Priorities: 0 = first.
world_size 3
source tnbc-auto
piece 32768

site auto_phases+0x1339 alltoall
  comm_size 3
  block_bytes 65536
  chunks 0
  calls 115 traced 2
  decision on measured in this run: 1.246 ms from call to call after early calls, 0.850 ms after blocking ones (medians of 54 and 8; Mann-Whitney z -4.21, a gain)
  order consensus 2 1 0
  agreement identical 1 tau 1 samples 3
  model tcomm_ns 155651.086 dcomm 196608 rcomm 1.26313285e+09 tcurc_ns 31337.7341 rcrc 2.79967493e+09 tinit_ns 78790.306 toverlap_ns 76860.7798 saving_call_ns 0 saving_run_ns 0 regime e
  measured early 89 checked 25 cycle_early_ns 1246428 cycle_blocking_ns 849697.5 saving_call_ns -396730.5 z -4.21010427
  recv_prio 0 2 1 0
  recv_prio 1 2 1 0
  recv_prio 2 2 1 0
  send_prio 0 2 2 2
  send_prio 1 1 1 1
  send_prio 2 0 0 0
  node node0 2 1 0
end
