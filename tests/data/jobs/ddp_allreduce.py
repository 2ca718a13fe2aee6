"""One replica of a PyTorch job: forms the gloo process group from the operator's variables
(MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE), all-reduces rank + 1, prints the sum. The rank
named by FAIL_RANK exits with code 3 after joining, leaving the others blocked; with FAIL_ONCE
set to a path, only while that file does not exist yet (it creates it)."""

import os
import sys

import torch
import torch.distributed as dist

dist.init_process_group("gloo", init_method="env://")
rank = dist.get_rank()
once = os.environ.get("FAIL_ONCE")
if os.environ.get("FAIL_RANK") == str(rank) and not (once and os.path.exists(once)):
    if once:
        open(once, "w").close()
    print(f"rank={rank} failing on purpose", flush=True)
    sys.exit(3)
total = torch.tensor([float(rank + 1)])
dist.all_reduce(total)
print(f"rank={rank} world={dist.get_world_size()} sum={total.item()}", flush=True)
dist.destroy_process_group()
