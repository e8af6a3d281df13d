"""The walkthrough K3 writes with its findings: read from ``submit_review``, its diagram
checked (:mod:`.mermaid`), its issue verdicts kept to the issues the prompt showed."""
