"""Ask the kernel to read ahead the files a new judge is about to load, so that they come off disk together.

On a host whose page cache does not hold them yet (the first judge after a reboot, or after other work pushed
them out), importing CuPy took 1.25 s on an H200 host against about 0.6 s once its files were cached: an import
faults in each shared library's pages a few at a time, one library after another. `POSIX_FADV_WILLNEED` on every
shared library of the packages queues them all at once and returns; the imports then find most pages read. Nothing is loaded or run, and a system without `posix_fadvise` (or a package not installed) is
skipped.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Iterator, Sequence

from drill.kernel_shared import nvrtc

# what a CUDA card's first run imports before its verdict: CuPy's kit and NumPy (NVRTC is found as drill loads it)
CUDA_FIRST_RUN = ("cupy", "cupy_backends", "numpy", "fastrlock")


def package_files(names: Sequence[str]) -> Iterator[str]:
    """The shared libraries under each installed package of `names` (most of what an import reads), found without
    importing the packages themselves (a namespace parent such as `nvidia` is imported: it holds no code)."""
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is None:
            continue
        for root in spec.submodule_search_locations or ():
            for folder, _, files in os.walk(root):
                for file in files:
                    if ".so" in file:
                        yield os.path.join(folder, file)


def read_ahead(paths: Iterator[str]) -> int:
    """Queue each file for reading ahead; the number of bytes queued."""
    if not hasattr(os, "posix_fadvise"):
        return 0
    queued = 0
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_WILLNEED)
            queued += os.fstat(fd).st_size
        except OSError:
            pass
        finally:
            os.close(fd)
    return queued


def start_reading_ahead(names: Sequence[str] = CUDA_FIRST_RUN) -> threading.Thread:
    """Queue NVRTC's libraries (every CUDA card's build needs them), then walk the packages and queue theirs, in a
    thread (the walk is a hundred or so names)."""

    def queue() -> None:
        read_ahead(iter(nvrtc.first_candidate_files()))
        read_ahead(package_files(names))

    thread = threading.Thread(target=queue, name="read-ahead", daemon=True)
    thread.start()
    return thread
