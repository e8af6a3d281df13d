"""The project's own promises: README commands, packaging, layout, benchmarks."""
