"""Code intelligence: what a file holds (units, definitions, references), read by tree-sitter."""
