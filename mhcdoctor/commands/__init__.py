"""One module per subcommand; each exposes `command`, a click command that `mhcdoctor.cli` registers."""
