"""Stage 5: related code up front, in the room the budget left (``finder``): callers and
definitions of the names the change is about (``symbols``); with the symbol index, ranked
by their ties to the change in the reference graph (``ranking``); without it, looked for
nearest files first (``nearest_files``) one name at a time (``name_probe``)."""
