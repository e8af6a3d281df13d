"""GitNeural's benchmark suite: ``python -m benchmarks.run`` prints one table of measures.

Each ``bench_*.py`` module has ``run(quick: bool = False) -> list[Row]`` and a
``__main__`` that prints its own rows (see :mod:`benchmarks.common`).
"""
