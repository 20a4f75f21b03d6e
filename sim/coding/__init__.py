"""The second target: several coding agents changing one repository (DESIGN.md section 8).

Modules: ``model`` (the fixture project, patch merges, the in-memory repository target and
its test runner), ``story`` (units, world edits, the plan, the target adapter; ``simulate``
plugs the scenario into ``sim.world.Run``), ``systems`` (naive, advisory claim files, the
original's file-hash and symbol modes) and ``kernel_system`` (the claims kernel), ``judge``
(harm from the repository alone), ``table`` (the 13 fixed rows), ``sweep`` (seeded random
plans), ``real`` (the same table on a real directory with real pytest runs, through
``gate.repo``, handed in by ``run_all.py``), ``report`` (results/coding_*), ``python -m
sim.coding`` (the command). The pure change model and symbol digests are ``kernel.changes``
and ``kernel.symbols``, shared with ``gate.repo``.
"""
