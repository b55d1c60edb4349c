"""`python -m rolemem.cli …`, as the `rolemem` script."""

import sys

from .main import main

sys.exit(main())
