"""The typed schema every evidence file is written and read with (``schema``)."""
