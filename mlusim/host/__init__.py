"""The host machinery under the simulated device: host threads and the team that shares a kernel's work over the
host's cores (threads), the fork-join map over that team every kernel library uses (parallel), OpenBLAS's thread
count around GEMMs run on the team (blas), spin-waits and atomic words shared between threads and processes (spin,
atomics), shared memory that peers map (sharedmem), and the host-wide memory budget of all simulated memory
(budget)."""
