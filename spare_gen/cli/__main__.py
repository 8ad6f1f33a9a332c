"""``python -m spare_gen.cli``: the ``spare-gen`` command line."""

import sys

from spare_gen.cli import main

sys.exit(main())
