import sys

from stereoprobe.cli import main

sys.exit(main())
