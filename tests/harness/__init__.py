"""The fakes' own tests: the code that judges correctness is itself checked."""
