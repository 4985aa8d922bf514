"""The command line's handlers, one module per command group; `vlbench.cli` builds the parser and
dispatches to them, importing a module only when its command runs.

`tasks`, `submissions` (validate, score), `compare`, `leaderboard`, `data` (prepare, import);
`output` is what they print. A handler takes the parsed arguments and returns the exit code.
"""

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2
