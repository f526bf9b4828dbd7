from .cli_core import main

main()
