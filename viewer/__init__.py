"""The viewer: a static page (index.html) and the builder of its data files (build.py)."""
