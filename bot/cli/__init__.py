"""The `gitneural` command line, which starts every entrance."""
