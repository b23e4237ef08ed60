#!/usr/bin/python3
"""braid-torch-perf: braid through torch.distributed (the backend in
plugins/torch, CPU tensors), the same sweep and calls as gloo_perf.py, so the
two torch backends compare call for call, and the gap to braid-perf is the
cost of the Python layer. Needs BRAID_LIBRARY (libbraid.so's path) or
libbraid.so.0 on the loader's path.

  BRAID_LIBRARY=build/libbraid.so build/tools/braid-run/braid-run -n 4 -- \\
      /usr/bin/python3 perf/anchors/braid_torch_perf.py allreduce -b 8 -e 1M -f 4
"""
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
sys.path.insert(0, os.path.join(here, "..", "..", "plugins", "torch"))
import torch_perf  # noqa: E402

if __name__ == "__main__":
    import braid_torch  # noqa: F401 (registers the "braid" backend)

    sys.exit(torch_perf.main(sys.argv[1:], "braid", __doc__.split("\n\n")[0]))
