"""Regenerate results/ from nothing: ``python run_all.py --help`` explains the knobs.

The work is done by ``sim.cli``; this file makes the repository root runnable and hands the
simulator the real repository target (``gate.repo.Repo``) for ``--coding``, since sim/ may
not import gate/ (DESIGN.md section 3).
"""

from gate.repo import Repo
from sim.cli import main

if __name__ == "__main__":
    raise SystemExit(main(open_repo=Repo))
