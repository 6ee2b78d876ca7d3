"""What each `verdicts` command does, by kind; `orchestration.cli` parses the command line and calls them."""
