"""Answering developers: replies in the threads of GitNeural's findings, and ``/ask``."""
