"""What touches the world, and what confines it.

- `gateway.py`: the effects gateway, the one place a run's side effects pass through; it
  checks each against the write grants (`grants.py`) and hands it to a performer, with
  the values of `performing.py`.
- `beneath.py`: files reached beneath a directory handle, so that a link swapped in
  cannot lead a write out; `tracked.py`: what a what-if may read and show.
- `process.py` and `process_groups.py`: programs run with timeouts, and the process
  groups a run has in flight; `confinement/`: where a program may write, enforced by
  the kernel where it can be.
- `network.py`: HTTP requests; `worktrees.py`: the git worktree a run may move into.

The order of imports is downward: gateway -> process, confinement -> performing, grants,
beneath; nothing below imports the gateway.
"""
