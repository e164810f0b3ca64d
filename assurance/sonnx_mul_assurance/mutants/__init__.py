"""Mutation testing behind ``make mutants``: do the checks kill planted faults?

``python -m sonnx_mul_assurance.mutants`` (:mod:`.cli`) generates mutants by
operator, spread evenly over each target file, runs each in a private copy of the
repository against the fast checks of its file, and fails on a survivor not
explained in ``proofs/mutants-equivalent.json``. The package:

* :mod:`.targets`: the targets, data kept next to the tests
  (``tests/mutation-targets.toml``: each Python file and its tests, the C glue's
  functions and tests) and checked against the test tree;
* :mod:`.mutant`: a mutant, its key (the keys of ``proofs/mutants-equivalent.json``)
  and the even spread over a file;
* :mod:`.mutators`: one mutator per language, :mod:`.mutators.python` (the standard
  library's tokenizer and ``ast``), :mod:`.mutators.whyml` (patterns outside
  comments), :mod:`.mutators.c` (Pygments' C lexer), and the mutants of a run;
* :mod:`.runner`: the copies, the baseline, each mutant's checks and verdict;
* :mod:`.report`: ``proofs/out/mutants.json``, the summary, the exit code.
"""
