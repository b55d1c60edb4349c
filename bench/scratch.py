"""A scratch folder for one benchmark run, removed when the run ends (the stores are hundreds of
MB; a folder left in /tmp by every run fills the disk)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path


def scratch_dir(prefix: str) -> Path:
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, folder, True)
    return folder
