tnbc-profile 1
# Written by tnbc-analyze; format: profiles/FORMAT.md. Priorities: 0 = first.
world_size 4
source varying.db
piece 32768

site app+0xc00c alltoall
  comm_size 4
  block_bytes -1
  chunks 0
  calls 12 traced 8
  decision off no CPU to overlap with: the 4 members share a node, and its machine runs 4 of the job's ranks on 2 CPUs, so moving their data (copying) takes a CPU from some rank's work (--comm-cpu-share overrides)
  order per-rank 0 1 2 3
  agreement identical 0.6875 tau 0.791667 samples 32
  model tcomm_ns 5465096.03 dcomm 1312000 rcomm 240068975 tcurc_ns 20118.1084 rcrc 948362293 tinit_ns 3857342.42 toverlap_ns 1403555.65 saving_call_ns 0 saving_run_ns 0 regime c
  # confidence 0.41 observer_share 0.593 steps 0 dropped 0
  block_range 320000 336000
  rank_order 0 3 2 0 1
  rank_order 2 3 2 0 1
  rank_order 3 3 2 0 1
  recv_prio 0 2 3 1 0
  recv_prio 1 0 1 2 3
  recv_prio 2 2 3 1 0
  recv_prio 3 2 3 1 0
  send_prio 0 2 0 2 2
  send_prio 1 3 1 3 3
  send_prio 2 1 2 1 1
  send_prio 3 0 3 0 0
  node vm 3 0 2 1
end

site app+0xc9df allgatherv
  comm_size 4
  block_bytes -1
  chunks 0
  calls 12 traced 8
  decision off no CPU to overlap with: the 4 members share a node, and its machine runs 4 of the job's ranks on 2 CPUs, so moving their data (copying) takes a CPU from some rank's work (--comm-cpu-share overrides)
  order consensus 3 2 1 0
  agreement identical 1 tau 1 samples 32
  model tcomm_ns 2583236.37 dcomm 160048 rcomm 61956390 tcurc_ns 16561.3911 rcrc 939109528 tinit_ns 446076.143 toverlap_ns 186986.666 saving_call_ns 0 saving_run_ns 0 regime c
  # confidence 0.59 observer_share 0.412 steps 0 dropped 0
  vhash 0 0x4d59323c8d896445
  vhash 1 0x4d59323c8d896445
  vhash 2 0x4d59323c8d896445
  vhash 3 0x4d59323c8d896445
  recv_prio 0 3 2 1 0
  recv_prio 1 3 2 1 0
  recv_prio 2 3 2 1 0
  recv_prio 3 3 2 1 0
  send_prio 0 3 3 3 3
  send_prio 1 2 2 2 2
  send_prio 2 1 1 1 1
  send_prio 3 0 0 0 0
  node vm 3 2 1 0
end

site app+0xd063 allreduce
  comm_size 4
  block_bytes 2048
  chunks 1
  calls 12 traced 8
  decision off no CPU to overlap with: the 4 members share a node, and its machine runs 4 of the job's ranks on 2 CPUs, so moving their data (copying) takes a CPU from some rank's work (--comm-cpu-share overrides)
  order default 0
  agreement identical 0 tau 0 samples 0
  model tcomm_ns 409932.755 dcomm 2048 rcomm 4995941.34 tcurc_ns inf rcrc inf tinit_ns 415734.856 toverlap_ns 0 saving_call_ns 0 saving_run_ns 0 regime a
  # confidence 1.00 observer_share 0.000 steps 0 dropped 0
  recv_prio * 0
  send_prio * 0
end
