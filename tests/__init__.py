"""GitNeural's tests: one package per area; the fakes in ``tests.fakes``, what many tests
share in ``tests.support``, shared fixtures in ``conftest.py``."""
