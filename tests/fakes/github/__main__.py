import sys

from tests.fakes.github.server import main

sys.exit(main())
