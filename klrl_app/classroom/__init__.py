"""Class sessions' prediction questions (issue 32) and the printable handout (issue 34)."""
