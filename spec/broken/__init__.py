"""Kernel.tla with one design decision removed per module; see make.py."""
