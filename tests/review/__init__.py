"""The review core, stage by stage and whole, against real repositories and the K3 stub."""
