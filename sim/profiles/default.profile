# threadlab simulator profile: nanoseconds unless the key says kb
# measured: 2026-11-30, threadlab calibrate on vm (2 cores, Linux 6.18.44-fc-v595)
version = 7
read_ns = 3349
write_ns = 3515
accept_ns = 2495
close_ns = 7740
epoll_wait_ns = 463
eventfd_ns = 457
# poll_ns and read_empty_ns: threadlab calibrate --only poll, 2026-12-04,
# the same vm (read_empty_ns is what a virtual thread's park pays)
poll_ns = 299
read_empty_ns = 169
# wakeup_ns and wakeup_cpu_ns: an idle core's wakeup, 2026-12-01, the same
# vm: calibrate's pass between two threads pinned to two cores, its CPU
# (21 948 ns, rounds within 7.6%) and what the quiet run's pass (34.2 us,
# 17:19 UTC) took beyond it; wakeup_ipi_ns: of that CPU, what the
# waker's write pays (the interrupt it sends), the median of four
# calibrations on 2026-12-02 (9.6-16.2 us); wakeup_granularity_ns: CFS's
# default on 2 cores, 1 ms x (1 + log2 2)
wakeup_ns = 7050
wakeup_cpu_ns = 21948
wakeup_ipi_ns = 14600
wakeup_granularity_ns = 2000000
# Linux's own: idle_search_pct, SIS_UTIL's imbalance_pct (a woken thread
# looks for an idle core only while the cores are not too busy);
# balance_interval_ns, the balancer at the scheduler's tick (HZ = 250);
# migration_cost_ns, sched_migration_cost's default
idle_search_pct = 117
balance_interval_ns = 4000000
migration_cost_ns = 500000
context_switch_ns = 2354
context_switch_log2_ns = 150
thread_create_ns = 50483
handle_ns = 19
net_one_way_ns = 6214
time_slice_ns = 3000000
stack_kb = 8192
# stack_touched_kb and kernel_stack_kb: threadlab calibrate, 2026-12-01, the
# same vm (200 threads blocked after a line, median of 5 rounds)
stack_touched_kb = 24
kernel_stack_kb = 16
conn_kb = 8
# the virtual threads: threadlab calibrate --only vthread, 2026-12-04, the
# same vm (the asm switch; the stack pages a stand-in of the handler
# touches, counted by mincore)
vt_switch_ns = 12
vt_stack_map_ns = 1947
vt_stack_unmap_ns = 3307
vt_stack_touched_kb = 4
# a timer's wakeup: threadlab calibrate --only idle, 2026-12-07, the same vm
# (a core's late wakeup after a long idle, wakeup_deep_*, is left at 0)
timer_late_ns = 34483
timer_late_sigma = 0.155
timer_late_p99 = 5.246
timer_late_p999 = 50.114
