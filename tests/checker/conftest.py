"""Shared helpers for the checker tests: write small specs to tmp_path and run them."""
import textwrap

import pytest

from spec.checker import check, load

PRELUDE = "EXTENDS Naturals, Integers, Sequences, FiniteSets, TLC, Bags\n"


def write_spec(tmp_path, body, cfg, name="M", extends=PRELUDE):
    text = f"---- MODULE {name} ----\n{extends}{textwrap.dedent(body)}\n====\n"
    spec = tmp_path / f"{name}.tla"
    spec.write_text(text)
    cfg_path = tmp_path / f"{name}.cfg"
    cfg_path.write_text(textwrap.dedent(cfg))
    return str(spec), str(cfg_path)


@pytest.fixture
def run_spec(tmp_path):
    def run(body, cfg="INIT Init\nNEXT Next\n", **kw):
        spec, cfg_path = write_spec(tmp_path, body, cfg, **kw)
        return check(spec, cfg_path)
    return run


@pytest.fixture(scope="session")
def expr_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("expr")
    body = """
    CONSTANTS a, b, c
    VARIABLE x
    Init == x = 0
    Next == x' = x
    """
    spec, cfg = write_spec(folder, body, "CONSTANTS a = a  b = b  c = c\nINIT Init\nNEXT Next\n")
    return load(spec, cfg)
