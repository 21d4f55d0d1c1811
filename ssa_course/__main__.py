"""``python -m ssa_course`` is the ``ssa-course`` command."""

import sys

from ssa_course.cli import main

sys.exit(main())
