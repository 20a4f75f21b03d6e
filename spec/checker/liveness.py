"""Temporal properties (placeholder, replaced below)."""


class PropertyChecker:
    def __init__(self, model):
        self.model = model
        self.needs_graph = False

    def check(self, explorer, result):
        return None
