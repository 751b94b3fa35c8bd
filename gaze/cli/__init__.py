"""The command line: a thin layer over the library, one file per subcommand."""
