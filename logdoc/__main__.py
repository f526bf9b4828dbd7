import sys

from .collector import hold_for_explain

hold_for_explain(sys.argv[1:])  # (before the command line's imports: logdoc.collector)

from .cli import main  # noqa: E402

main()
