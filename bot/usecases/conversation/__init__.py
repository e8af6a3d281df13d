"""One conversation job: a reply in GitNeural's thread, or a comment command, answered once."""
