"""Each command's arguments and help, one module per command (named as in ``spare_gen.cli.COMMANDS``).

What ``spare-gen COMMAND --help`` imports: argparse, the shared option helpers of ``spare_gen.cli.common`` and the
constants the help quotes, never the work the command runs (that is ``spare_gen.cli.<module>``).
"""
