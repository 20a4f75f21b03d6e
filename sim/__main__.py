"""``python -m sim`` is ``python run_all.py``."""

from sim.cli import main

raise SystemExit(main())
