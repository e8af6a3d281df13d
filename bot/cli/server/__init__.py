"""The App's server commands: ``serve`` and ``worker`` (with serve's supervisor, the WSGI
app, the start line and the settings checked at start), ``db`` and ``usage``."""
