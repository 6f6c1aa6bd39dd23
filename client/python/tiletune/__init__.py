# SPDX-License-Identifier: MIT
"""tiletune - Python client of the tiletune autotuning service for Ascend tile kernels.

    import tiletune
    c = tiletune.Client()                      # TILETUNE_URL / TILETUNE_TOKEN / tlctl.conf
    c.best("gemm", "a2", {"M": 4096, "N": 4096, "K": 4096}, nearest=True)["config"]

    @tiletune.autotune(template="gemm", key=["M", "N", "K", "dtype"], target="a2")
    def gemm(M, N, K, block_M, block_N, block_K, K_L1, S1, S2, dtype="float16"): ...

Standard library only.  Numbers that come from the cost model or the simulator are model
numbers (``"source": "model"`` / ``"sim"``), not measurements.
"""
__version__ = "0.1.0"

from .errors import *  # noqa: E402,F401,F403  (the exception hierarchy)
from .errors import __all__ as _errors_all  # noqa: E402
from .client import Client, problem_str  # noqa: E402
from .job import Job  # noqa: E402
from .autotune import Autotuner, Resolution, autotune  # noqa: E402
from .cache import DiskCache  # noqa: E402

__all__ = ["Client", "Job", "autotune", "Autotuner", "Resolution", "DiskCache",
           "problem_str", "__version__"] + list(_errors_all)
