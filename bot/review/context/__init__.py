"""Stage 3: what the model reads about each file (``file_context``: the annotated diff and
the code around it, and the trusted instructions), hunks grown to the function or class
around them (``enclosing``; Python with :mod:`ast` in ``python_units``), by the language
a file's name says (``languages``)."""
