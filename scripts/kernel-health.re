BUG:
WARNING:
Oops
KASAN
UBSAN
general protection
soft lockup
hung_task
blocked for more than
refcount_t
unregister_netdevice: waiting
possible recursive locking
circular locking
inconsistent lock state
suspicious RCU
kernel BUG at
\[#[0-9]+\]
