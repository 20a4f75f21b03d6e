"""The SimPy world the kernel and its baselines run in.

How it works. ``sim.world.simulate(plan, system, tier, seed)`` builds one world from one
``random.Random(seed)`` (sub-seeded per concern): a clock, a network, a disk, a target
service with the tier's capabilities, the refund story (agent, support desk, lease), and a
system under test (``faults.systems``). A plan (``faults.plans``) says where the worker
crashes, how long it stays down and what the world does meanwhile. The run ends when no
event is left; ``sim.measure`` then judges it from what the target actually applied.
``run_all.py`` drives the fixed table, the sweep, the shrinker and the plots.
"""
