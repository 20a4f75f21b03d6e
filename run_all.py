"""Regenerate results/ from nothing: ``python run_all.py --help`` explains the knobs.

The work is done by ``sim.cli``; this file only makes the repository root runnable.
"""

from sim.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
