import sys

from agentproc.cli import main

sys.exit(main())
