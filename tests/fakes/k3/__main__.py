import sys

from tests.fakes.k3.stub import main

sys.exit(main())
